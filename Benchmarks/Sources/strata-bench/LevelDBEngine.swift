// LevelDB's function table, from its C API (shim: Sources/CLevelDBPeer).
import CLevelDBPeer
import PeerSupport

extension LSMEngine {
    static func levelDB() throws -> LSMEngine {
        let library = try PeerLibrary(engine: "leveldb",
                                      sonames: ["libleveldb.so.1d", "libleveldb.so.1", "libleveldb.so", "libleveldb.dylib"],
                                      debianPackage: "libleveldb-dev")
        let api = LSMAPI(
            engine: "leveldb",
            open: try library.function("leveldb_open", as: leveldb_open_fn.self),
            close: try library.function("leveldb_close", as: leveldb_close_fn.self),
            write: try library.function("leveldb_write", as: leveldb_write_fn.self),
            get: try library.function("leveldb_get", as: leveldb_get_fn.self),
            createIterator: try library.function("leveldb_create_iterator", as: leveldb_create_iterator_fn.self),
            compactRange: try library.function("leveldb_compact_range", as: leveldb_compact_range_fn.self),
            iterDestroy: try library.function("leveldb_iter_destroy", as: leveldb_iter_destroy_fn.self),
            iterValid: try library.function("leveldb_iter_valid", as: leveldb_iter_valid_fn.self),
            iterSeekToFirst: try library.function("leveldb_iter_seek_to_first", as: leveldb_iter_seek_to_first_fn.self),
            iterNext: try library.function("leveldb_iter_next", as: leveldb_iter_next_fn.self),
            iterValue: try library.function("leveldb_iter_value", as: leveldb_iter_value_fn.self),
            iterGetError: try library.function("leveldb_iter_get_error", as: leveldb_iter_get_error_fn.self),
            writebatchCreate: try library.function("leveldb_writebatch_create", as: leveldb_writebatch_create_fn.self),
            writebatchDestroy: try library.function("leveldb_writebatch_destroy", as: leveldb_writebatch_destroy_fn.self),
            writebatchPut: try library.function("leveldb_writebatch_put", as: leveldb_writebatch_put_fn.self),
            optionsCreate: try library.function("leveldb_options_create", as: leveldb_options_create_fn.self),
            optionsDestroy: try library.function("leveldb_options_destroy", as: leveldb_options_destroy_fn.self),
            optionsSetCreateIfMissing: try library.function("leveldb_options_set_create_if_missing",
                                                            as: leveldb_options_set_create_if_missing_fn.self),
            readoptionsCreate: try library.function("leveldb_readoptions_create", as: leveldb_readoptions_create_fn.self),
            readoptionsDestroy: try library.function("leveldb_readoptions_destroy", as: leveldb_readoptions_destroy_fn.self),
            writeoptionsCreate: try library.function("leveldb_writeoptions_create", as: leveldb_writeoptions_create_fn.self),
            writeoptionsDestroy: try library.function("leveldb_writeoptions_destroy", as: leveldb_writeoptions_destroy_fn.self),
            writeoptionsSetSync: try library.function("leveldb_writeoptions_set_sync", as: leveldb_writeoptions_set_sync_fn.self),
            free: try library.function("leveldb_free", as: leveldb_free_fn.self),
            flushWAL: nil)
        let major = try library.function("leveldb_major_version", as: leveldb_major_version_fn.self)()
        let minor = try library.function("leveldb_minor_version", as: leveldb_minor_version_fn.self)()
        return LSMEngine(api: api, name: "leveldb", displayName: "LevelDB", version: "\(major).\(minor)")
    }
}
