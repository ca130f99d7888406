// The part of SQLite's C API (sqlite3.h, 3.x; a stable ABI) that strata-bench and
// strata-records use, as function-pointer types to fill with dlsym. Declarations only: see
// docs/decisions/2026-11-21-benchmark-peers.md for why the real header is not included.
#ifndef STRATA_CSQLITE_PEER_H
#define STRATA_CSQLITE_PEER_H

typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;

#define SQLITE_OK 0
#define SQLITE_ROW 100
#define SQLITE_DONE 101
#define SQLITE_OPEN_READWRITE 0x00000002
#define SQLITE_OPEN_CREATE 0x00000004
#define SQLITE_OPEN_NOMUTEX 0x00008000

typedef const char *(*sqlite3_libversion_fn)(void);
typedef int (*sqlite3_open_v2_fn)(const char *filename, sqlite3 **ppDb, int flags, const char *zVfs);
typedef int (*sqlite3_close_v2_fn)(sqlite3 *db);
typedef int (*sqlite3_exec_fn)(sqlite3 *db, const char *sql,
                               int (*callback)(void *, int, char **, char **), void *context,
                               char **errmsg);
typedef void (*sqlite3_free_fn)(void *memory);
typedef int (*sqlite3_busy_timeout_fn)(sqlite3 *db, int milliseconds);
typedef const char *(*sqlite3_errmsg_fn)(sqlite3 *db);
typedef int (*sqlite3_prepare_v2_fn)(sqlite3 *db, const char *zSql, int nByte,
                                     sqlite3_stmt **ppStmt, const char **pzTail);
/// The destructor argument: NULL is SQLITE_STATIC (the caller keeps the bytes alive).
typedef int (*sqlite3_bind_blob_fn)(sqlite3_stmt *stmt, int index, const void *bytes, int n,
                                    void (*destructor)(void *));
/// SQLite's sqlite3_int64 is a signed 64-bit integer.
typedef int (*sqlite3_bind_int64_fn)(sqlite3_stmt *stmt, int index, long long value);
/// n is the length in bytes of UTF-8 text; the destructor argument as for blobs.
typedef int (*sqlite3_bind_text_fn)(sqlite3_stmt *stmt, int index, const char *text, int n,
                                    void (*destructor)(void *));
typedef int (*sqlite3_step_fn)(sqlite3_stmt *stmt);
typedef int (*sqlite3_reset_fn)(sqlite3_stmt *stmt);
typedef int (*sqlite3_column_bytes_fn)(sqlite3_stmt *stmt, int column);
typedef long long (*sqlite3_column_int64_fn)(sqlite3_stmt *stmt, int column);
/// Valid until the next step, reset or finalize; its length is sqlite3_column_bytes, called after it.
typedef const unsigned char *(*sqlite3_column_text_fn)(sqlite3_stmt *stmt, int column);
typedef int (*sqlite3_finalize_fn)(sqlite3_stmt *stmt);

#endif
