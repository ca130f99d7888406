// sync_file_range is a GNU extension: declared only with _GNU_SOURCE, before any header.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>

#include "strata_writeback.h"

int strata_start_writeback(int fd, long long offset, long long count) {
#if defined(__linux__)
    int result;
    do {
        result = sync_file_range(fd, (off_t)offset, (off_t)count, SYNC_FILE_RANGE_WRITE);
    } while (result != 0 && errno == EINTR);
    return result == 0 ? 0 : errno;
#else
    (void)fd;
    (void)offset;
    (void)count;
    return 0;
#endif
}
