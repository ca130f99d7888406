// See include/strata_thread_slots.h.
#include "strata_thread_slots.h"

static _Thread_local void *slots[STRATA_THREAD_SLOT_COUNT];

void **strata_thread_slots(void) {
    return slots;
}
