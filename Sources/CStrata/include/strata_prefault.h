// Faulting in fresh memory with one system call instead of one page fault per page.
#ifndef STRATA_PREFAULT_H
#define STRATA_PREFAULT_H

#include <stddef.h>

/// Makes the whole pages inside `count` bytes at `bytes` present and writable now
/// (Linux's madvise MADV_POPULATE_WRITE), so that writing them later takes no page faults:
/// for freshly allocated memory the process is about to fill, where a fault per 4 KiB page
/// costs more than the kernel setting them all up at once. Pages already present are left as
/// they are, and their contents never change. Only a hint: failures (an older kernel) are
/// ignored, and elsewhere it does nothing.
void strata_prefault(void *bytes, size_t count);

#endif
