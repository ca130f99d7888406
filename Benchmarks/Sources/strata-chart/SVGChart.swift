/// The chart as an SVG document: a title and legend across the top, then one panel per
/// workload, two to a row. It is written from ordered arrays only, with fixed number formats,
/// so the same input always gives the same bytes and a regenerated chart diffs cleanly.
struct SVGChart {
    let data: ChartData
    let title: String

    // Sizes in SVG pixels. A panel is wide enough for about three decades of N with every
    // 2x and 5x label, which covers the usual 100k-10M runs.
    private let panelWidth = 420.0
    private let panelHeight = 290.0
    private let plotLeft = 64.0
    private let plotRight = 20.0
    private let plotTop = 34.0
    private let plotBottom = 48.0
    private let margin = 12.0
    private let tickFont = 11.0
    private let legendFont = 12.0
    private let legendRowHeight = 20.0
    private let textColour = "#222222"
    private let axisColour = "#888888"

    private typealias LegendEntry = (engine: String, width: Double)

    func render() -> String {
        let colours = EnginePalette.colours(for: data.engines)
        let columns = Double(min(max(data.workloads.count, 1), 2))
        let width = columns * panelWidth + 2 * margin
        let legendRows = legendLayout(width: width - 2 * margin)
        // The explanation is one line over two panels, one line per sentence over a single one.
        var subtitle = ["ops/s against N, both on log scales; higher is better."]
        if data.hasRepeatedRuns { subtitle.append("Medians of repeated runs; bars span lowest to highest.") }
        if NumberText.estimatedWidth(subtitle.joined(separator: " "), fontSize: 12) <= width - 2 * margin {
            subtitle = [subtitle.joined(separator: " ")]
        }
        let legendTop = 66 + Double(subtitle.count - 1) * 16
        let headerHeight = legendTop + Double(legendRows.count) * legendRowHeight
        let rows = Double((data.workloads.count + 1) / 2)
        let height = headerHeight + rows * panelHeight + margin

        var out = [#"<?xml version="1.0" encoding="UTF-8"?>"#]
        out.append(
            open(
                "svg",
                [
                    ("xmlns", "http://www.w3.org/2000/svg"), ("width", c(width)), ("height", c(height)),
                    ("viewBox", "0 0 \(c(width)) \(c(height))"), ("font-family", "Helvetica, Arial, sans-serif")
                ]))
        out.append(element("title", [], text: title))
        // An opaque background keeps the dark text readable where the page behind is dark.
        out.append(element("rect", [("width", "100%"), ("height", "100%"), ("fill", "#ffffff")]))
        out.append(
            element(
                "text", [("x", c(width / 2)), ("y", "28"), ("font-size", "18"), ("font-weight", "bold"), ("text-anchor", "middle"), ("fill", textColour)],
                text: title))
        for (index, line) in subtitle.enumerated() {
            out.append(
                element(
                    "text", [("x", c(width / 2)), ("y", c(48 + Double(index) * 16)), ("font-size", "12"), ("text-anchor", "middle"), ("fill", "#555555")],
                    text: line))
        }
        out += legend(rows: legendRows, top: legendTop, colours: colours, width: width)
        for (index, workload) in data.workloads.enumerated() {
            let x = margin + Double(index % 2) * panelWidth
            let y = headerHeight + Double(index / 2) * panelHeight
            out += panel(workload: workload, x: x, y: y, colours: colours)
        }
        out.append("</svg>")
        return out.joined(separator: "\n") + "\n"
    }

    /// The engines split into rows that fit `width`.
    private func legendLayout(width: Double) -> [[LegendEntry]] {
        var rows: [[LegendEntry]] = []
        var current: [LegendEntry] = []
        var used = 0.0
        for engine in data.engines {
            let entryWidth = 30 + NumberText.estimatedWidth(engine, fontSize: legendFont) + 20
            if !current.isEmpty && used + entryWidth > width {
                rows.append(current)
                current = []
                used = 0
            }
            current.append((engine, entryWidth))
            used += entryWidth
        }
        if !current.isEmpty { rows.append(current) }
        return rows
    }

    private func legend(rows: [[LegendEntry]], top: Double, colours: [String: String], width: Double) -> [String] {
        var out: [String] = []
        for (rowIndex, row) in rows.enumerated() {
            var x = (width - row.reduce(0) { $0 + $1.width }) / 2
            let y = top + Double(rowIndex) * legendRowHeight
            for entry in row {
                let colour = colours[entry.engine] ?? "#000000"
                out.append(line(x, y, x + 24, y, colour: colour, width: "2"))
                out.append(marker(x: x + 12, y: y, colour: colour))
                out.append(element("text", [("x", c(x + 30)), ("y", c(y + 4)), ("font-size", c(legendFont)), ("fill", textColour)], text: entry.engine))
                x += entry.width
            }
        }
        return out
    }

    private func panel(workload: String, x: Double, y: Double, colours: [String: String]) -> [String] {
        let left = x + plotLeft
        let right = x + panelWidth - plotRight
        let top = y + plotTop
        let bottom = y + panelHeight - plotBottom
        let series = data.engines.map { (engine: $0, points: data.series(workload: workload, engine: $0)) }.filter { !$0.points.isEmpty }
        let xAxis = LogAxis.forSizes(data.sizes(of: workload).map(Double.init))
        let yAxis = LogAxis.forRates(series.flatMap { $0.points.flatMap { [$0.lowest, $0.highest] } })
        func px(_ value: Double) -> Double { left + xAxis.fraction(of: value) * (right - left) }
        func py(_ value: Double) -> Double { bottom - yAxis.fraction(of: value) * (bottom - top) }

        var out = ["<g>"]
        out.append(
            element(
                "text",
                [("x", c((left + right) / 2)), ("y", c(y + 20)), ("font-size", "14"), ("font-weight", "bold"), ("text-anchor", "middle"), ("fill", textColour)],
                text: workload))

        let xPixelsPerDecade = (right - left) / (xAxis.upperLog - xAxis.lowerLog)
        let xLabelWidth =
            xAxis.ticks(pixelsPerDecade: xPixelsPerDecade, labelGap: 0)
            .map { NumberText.estimatedWidth(NumberText.siLabel($0.value), fontSize: tickFont) }.max() ?? 0
        for tick in xAxis.ticks(pixelsPerDecade: xPixelsPerDecade, labelGap: xLabelWidth + 10) {
            let tickX = px(tick.value)
            out.append(gridLine(tickX, top, tickX, bottom, decade: tick.isDecade))
            out.append(line(tickX, bottom, tickX, bottom + 4, colour: axisColour, width: "1"))
            if tick.isLabelled {
                out.append(tickLabel(NumberText.siLabel(tick.value), x: tickX, y: bottom + 17, anchor: "middle"))
            }
        }
        let yPixelsPerDecade = (bottom - top) / (yAxis.upperLog - yAxis.lowerLog)
        for tick in yAxis.ticks(pixelsPerDecade: yPixelsPerDecade, labelGap: tickFont + 5) {
            let tickY = py(tick.value)
            out.append(gridLine(left, tickY, right, tickY, decade: tick.isDecade))
            out.append(line(left - 4, tickY, left, tickY, colour: axisColour, width: "1"))
            if tick.isLabelled {
                out.append(tickLabel(NumberText.siLabel(tick.value), x: left - 7, y: tickY + 4, anchor: "end"))
            }
        }
        out.append(
            element(
                "rect",
                [
                    ("x", c(left)), ("y", c(top)), ("width", c(right - left)), ("height", c(bottom - top)), ("fill", "none"),
                    ("stroke", axisColour), ("stroke-width", "1")
                ]))
        out.append(axisTitle("N", x: (left + right) / 2, y: bottom + 36, rotated: false))
        out.append(axisTitle("ops/s", x: x + 16, y: (top + bottom) / 2, rotated: true))

        // Strata last, so its line is on top where lines cross.
        for (engine, points) in series.reversed() {
            let colour = colours[engine] ?? "#000000"
            for point in points where point.highest > point.lowest {
                let barX = px(Double(point.num))
                let low = py(point.lowest)
                let high = py(point.highest)
                let path = "M\(c(barX)) \(c(low))V\(c(high))M\(c(barX - 3)) \(c(low))H\(c(barX + 3))M\(c(barX - 3)) \(c(high))H\(c(barX + 3))"
                out.append(element("path", [("d", path), ("fill", "none"), ("stroke", colour), ("stroke-width", "1.2")]))
            }
            if points.count > 1 {
                let coordinates = points.map { "\(c(px(Double($0.num)))),\(c(py($0.median)))" }.joined(separator: " ")
                out.append(
                    element(
                        "polyline",
                        [
                            ("points", coordinates), ("fill", "none"), ("stroke", colour),
                            ("stroke-width", engine == "strata" ? "2.5" : "1.8"), ("stroke-linejoin", "round")
                        ]))
            }
            for point in points {
                out.append(marker(x: px(Double(point.num)), y: py(point.median), colour: colour))
            }
        }
        out.append("</g>")
        return out
    }

    private func tickLabel(_ text: String, x: Double, y: Double, anchor: String) -> String {
        element("text", [("x", c(x)), ("y", c(y)), ("font-size", c(tickFont)), ("text-anchor", anchor), ("fill", "#444444")], text: text)
    }

    private func axisTitle(_ text: String, x: Double, y: Double, rotated: Bool) -> String {
        var attributes = [("x", c(x)), ("y", c(y)), ("font-size", "12"), ("text-anchor", "middle"), ("fill", "#444444")]
        if rotated { attributes.append(("transform", "rotate(-90 \(c(x)) \(c(y)))")) }
        return element("text", attributes, text: text)
    }

    private func gridLine(_ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, decade: Bool) -> String {
        line(x1, y1, x2, y2, colour: decade ? "#d0d0d0" : "#ececec", width: "1")
    }

    private func line(_ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, colour: String, width: String) -> String {
        element("line", [("x1", c(x1)), ("y1", c(y1)), ("x2", c(x2)), ("y2", c(y2)), ("stroke", colour), ("stroke-width", width)])
    }

    private func marker(x: Double, y: Double, colour: String) -> String {
        element("circle", [("cx", c(x)), ("cy", c(y)), ("r", "3.5"), ("fill", colour), ("stroke", "#ffffff"), ("stroke-width", "1")])
    }

    /// `<name a="v" ...>`, every value escaped, so user text is safe anywhere it lands.
    private func open(_ name: String, _ attributes: [(String, String)]) -> String {
        "<" + name + attributes.map { " \($0.0)=\"\(NumberText.xmlEscaped($0.1))\"" }.joined() + ">"
    }

    /// A whole element: with `text` as its content, or empty and self-closed.
    private func element(_ name: String, _ attributes: [(String, String)], text: String? = nil) -> String {
        let start = open(name, attributes)
        guard let text else { return start.dropLast() + "/>" }
        return start + NumberText.xmlEscaped(text) + "</\(name)>"
    }

    private func c(_ value: Double) -> String { NumberText.coordinate(value) }
}
