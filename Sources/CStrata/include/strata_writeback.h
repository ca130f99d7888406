#ifndef STRATA_WRITEBACK_H
#define STRATA_WRITEBACK_H

/// Starts writing the dirty pages of `count` bytes at `offset` of the open file `fd` to the
/// device, without waiting for them (Linux's sync_file_range with SYNC_FILE_RANGE_WRITE), so
/// that a later fdatasync of the file has less left to wait for. Durability still comes only
/// from that fdatasync. Returns 0, or the errno of the failure; does nothing and returns 0
/// where the system has no such call.
int strata_start_writeback(int fd, long long offset, long long count);

#endif
