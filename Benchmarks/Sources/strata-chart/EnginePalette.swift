/// The colour each engine is drawn in. Strata and its usual peers keep one colour on every
/// chart, so charts from different runs can be compared at a glance.
enum EnginePalette {
    /// The known engines, in the order the legend and the table list them.
    static let known: [(engine: String, colour: String)] = [
        ("strata", "#1f77b4"),
        ("sqlite", "#2ca02c"),
        ("lmdb", "#ff7f0e"),
        ("leveldb", "#9467bd"),
        ("rocksdb", "#d62728")
    ]

    /// For other engines, handed out in the order they are listed, again from the start when
    /// there are more engines than colours.
    static let fallback = ["#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]

    /// `engines` with the known ones first, in their fixed order, then the others as given.
    static func ordered(_ engines: [String]) -> [String] {
        let knownNames = known.map(\.engine)
        return knownNames.filter { engines.contains($0) } + engines.filter { !knownNames.contains($0) }
    }

    /// A colour for each of `engines` (already `ordered`).
    static func colours(for engines: [String]) -> [String: String] {
        var colours: [String: String] = [:]
        var nextFallback = 0
        for engine in engines {
            if let fixed = known.first(where: { $0.engine == engine }) {
                colours[engine] = fixed.colour
            } else {
                colours[engine] = fallback[nextFallback % fallback.count]
                nextFallback += 1
            }
        }
        return colours
    }
}
