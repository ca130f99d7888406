// Per-thread slots, which Swift has no spelling for.
#ifndef STRATA_THREAD_SLOTS_H
#define STRATA_THREAD_SLOTS_H

/// How many slots each thread has (ReadScratch.swift names them).
#define STRATA_THREAD_SLOT_COUNT 4

/// This thread's slots, all null when the thread starts: a thread-local array, so reaching it
/// costs a call and a load or two, where `pthread_getspecific` and `pthread_setspecific` cost
/// more (the read path uses the slots on every read). The slots hold no destructor: their
/// owner registers one of its own for the thread's end. Defined in thread_slots.c, so the
/// process has one array per thread however many modules call this.
void **strata_thread_slots(void);

#endif
