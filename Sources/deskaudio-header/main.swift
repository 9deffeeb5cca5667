// Writes include/deskaudio.h from the C ABI layer's Swift sources, the way cbindgen does
// for Rust. It reads, in file-name order:
//   //! lines                                       → the header's opening comment
//   /// doc + public enum NAME: Int32 { case X = n } → typedef enum { X = n } NAME;
//   /// doc + public typealias NAME = @convention(c) (_ a: T, …) -> R → typedef R (*NAME)(T a, …);
//   /// doc + @_cdecl("name") public func …(_ a: T, …) -> R          → R name(T a, …);
// and, from Sources/DeskAudioCTypes/include/deskaudio_types.h, the C structs between its
// BEGIN/END PUBLIC TYPES markers (defined in C so the C compiler fixes their layout), each
// after a `/* GROUP n */` line naming its topic.
// The header is grouped by topic: each source file says its topic in a line
//   //# n. Heading: what the group holds
// and the groups follow in the order of n, each with its heading comment. A function's doc
// comment gives each parameter (`- Parameter name:` or a `- Parameters:` list) and, unless
// it returns void, `- Returns:`; they become @param and @return. A default-capture twin,
// documented as "X() on the default capture.", takes X's, less the capture. Every function
// is DESKAUDIO_EXPORT; a `// C: warn_unused_result` line before its @_cdecl adds
// DESKAUDIO_WARN_UNUSED_RESULT. A parameter or result left undocumented is an error.
//   /// doc + public typealias deskaudio_X = OpaquePointer   → typedef struct deskaudio_X deskaudio_X;
//                                                             (an opaque handle: deskaudio_X? in Swift is deskaudio_X * in C)
//   /// doc + public let DESKAUDIO_X: Int32 = n               → #define DESKAUDIO_X n
// A Swift type it cannot map is an error, never a guess.
//
// Usage: deskaudio-header [--check] [SOURCES_DIR [OUTPUT]]
//   defaults: Sources/DeskAudioC include/deskaudio.h; --check fails if OUTPUT is stale.
import Foundation

struct GeneratorError: Error, CustomStringConvertible {
    let description: String
}

/// Opaque handle types read so far (`public typealias deskaudio_X = OpaquePointer`).
nonisolated(unsafe) var opaqueTypes: Set<String> = []

/// Maps a Swift type, as written in a C ABI signature, to its C spelling.
func cType(_ swiftType: String) throws -> String {
    var type = swiftType.trimmingCharacters(in: .whitespaces)
    if type.hasSuffix("?") { type.removeLast() }
    let scalars: [String: String] = [
        "Bool": "bool", "Int8": "int8_t", "Int16": "int16_t", "Int32": "int32_t", "Int64": "int64_t",
        "UInt8": "uint8_t", "UInt16": "uint16_t", "UInt32": "uint32_t", "UInt64": "uint64_t",
        "size_t": "size_t", "Float": "float", "Double": "double", "CChar": "char", "Void": "void",
        "UnsafeRawPointer": "const void *", "UnsafeMutableRawPointer": "void *",
    ]
    if let scalar = scalars[type] { return scalar }
    if opaqueTypes.contains(type) { return type + " *" }
    if type.hasPrefix("deskaudio_") && type.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) {
        return type
    }
    for (prefix, isConst) in [("UnsafePointer<", true), ("UnsafeMutablePointer<", false)]
    where type.hasPrefix(prefix) && type.hasSuffix(">") {
        let pointee = try cType(String(type.dropFirst(prefix.count).dropLast()))
        guard isConst else { return pointee + " *" }
        // A const pointer to a pointer: `const char *const *`; to anything else: `const T *`.
        return pointee.hasSuffix("*") ? pointee + "const *" : "const " + pointee + " *"
    }
    throw GeneratorError(description: "no C type for Swift type '\(swiftType)'")
}

/// "R" and "*" glue: `const char *` + `name` → `const char *name`; `int32_t` + `x` → `int32_t x`.
func declare(_ type: String, _ name: String) -> String {
    type.hasSuffix("*") ? type + name : type + " " + name
}

/// Splits "a: A, b: B<C, D>" at top-level commas.
func splitParameters(_ text: String) -> [String] {
    var parts: [String] = []
    var depth = 0
    var current = ""
    for character in text {
        switch character {
        case "<", "(": depth += 1
        case ">", ")": depth -= 1
        case "," where depth == 0:
            parts.append(current)
            current = ""
            continue
        default: break
        }
        current.append(character)
    }
    if !current.trimmingCharacters(in: .whitespaces).isEmpty { parts.append(current) }
    return parts
}

/// "_ user_data: UnsafeMutableRawPointer?" → "void *user_data".
func cParameter(_ text: String) throws -> String {
    guard let colon = text.firstIndex(of: ":") else {
        throw GeneratorError(description: "parameter without a type: '\(text)'")
    }
    let names = text[..<colon].split(separator: " ").map(String.init)
    guard let name = names.last, name != "_" else {
        throw GeneratorError(description: "parameter without a C name: '\(text)'")
    }
    return declare(try cType(String(text[text.index(after: colon)...])), name)
}

func cParameterList(_ text: String) throws -> String {
    let parameters = try splitParameters(text).map(cParameter)
    return parameters.isEmpty ? "void" : parameters.joined(separator: ", ")
}

func comment(_ lines: [String], indent: String = "") -> String {
    guard !lines.isEmpty else { return "" }
    if lines.count == 1 { return "\(indent)/** \(lines[0]) */\n" }
    return "\(indent)/**\n" + lines.map { $0.isEmpty ? "\(indent) *\n" : "\(indent) * \($0)\n" }.joined()
        + "\(indent) */\n"
}

/// Text between the first "(" at or after `start` and its matching ")", and what follows.
func balancedParentheses(in text: String) throws -> (inside: String, after: String) {
    guard let open = text.firstIndex(of: "(") else {
        throw GeneratorError(description: "expected '(' in '\(text)'")
    }
    var depth = 0
    var index = open
    while index < text.endIndex {
        if text[index] == "(" { depth += 1 }
        if text[index] == ")" {
            depth -= 1
            if depth == 0 {
                return (
                    String(text[text.index(after: open)..<index]), String(text[text.index(after: index)...])
                )
            }
        }
        index = text.index(after: index)
    }
    throw GeneratorError(description: "unbalanced parentheses in '\(text)'")
}

/// "-> Int32 {" → "int32_t"; no arrow → "void".
func cReturnType(_ tail: String) throws -> String {
    guard let arrow = tail.range(of: "->") else { return "void" }
    var type = String(tail[arrow.upperBound...])
    if let brace = type.firstIndex(of: "{") { type = String(type[..<brace]) }
    return try cType(type)
}

/// One topic of the header: its heading and its declarations, by kind.
struct Group {
    var heading: [String] = []
    var defines: [String] = []
    var structs: [String] = []
    var enums: [String] = []
    var typedefs: [String] = []
    var functions: [String] = []
}

/// A function's documented parameters and result, for its default-capture twin.
struct FunctionDoc {
    var parameters: [String: [String]]
    var returns: [String]
}

/// Splits a doc comment into its prose, its `- Parameter(s)` entries and its `- Returns:`
/// text (continuation lines follow the entry they continue).
func structuredDoc(_ lines: [String]) -> (prose: [String], parameters: [(String, [String])], returns: [String]) {
    var prose: [String] = []
    var parameters: [(String, [String])] = []
    var returns: [String] = []
    enum Section { case prose, parameterList, parameter, returns }
    var section = Section.prose
    for line in lines {
        if line.hasPrefix("- Parameters:") {
            section = .parameterList
        } else if line.hasPrefix("- Parameter "), let colon = line.firstIndex(of: ":") {
            let name = String(line[line.index(line.startIndex, offsetBy: 12)..<colon]).trimmingCharacters(in: .whitespaces)
            parameters.append((name, [String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)]))
            section = .parameter
        } else if line.hasPrefix("- Returns:") {
            returns = [String(line.dropFirst("- Returns:".count)).trimmingCharacters(in: .whitespaces)]
            section = .returns
        } else if (section == .parameterList || section == .parameter), line.hasPrefix("- "),
            let colon = line.firstIndex(of: ":")
        {
            let name = String(line[line.index(line.startIndex, offsetBy: 2)..<colon])
            parameters.append((name, [String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)]))
            section = .parameter
        } else {
            switch section {
            case .prose, .parameterList: prose.append(line)
            case .parameter: parameters[parameters.count - 1].1.append(line)
            case .returns: returns.append(line)
            }
        }
    }
    while prose.last?.isEmpty == true { prose.removeLast() }
    return (prose, parameters, returns)
}

/// The C names of a parameter list's parameters.
func parameterNames(_ text: String) -> [String] {
    splitParameters(text).compactMap { part in
        part.split(separator: ":").first.flatMap { $0.split(separator: " ").last.map(String.init) }
    }
}

struct Header {
    var introduction: [String] = []
    var groups: [Int: Group] = [:]
    var functionCount = 0
    var typedefCount = 0
    var enumCount = 0
    private var group = 0
    private var documented: [String: FunctionDoc] = [:]

    private mutating func add(_ keyPath: WritableKeyPath<Group, [String]>, _ text: String) {
        groups[group, default: Group()][keyPath: keyPath].append(text)
    }

    mutating func read(_ source: String, file: String) throws {
        let lines = source.components(separatedBy: "\n")
        var doc: [String] = []
        var index = 0
        var warnUnused = false
        group = 0
        func statement(from start: Int, until terminator: String) -> (String, Int) {
            var text = ""
            var end = start
            while end < lines.count {
                text += lines[end].trimmingCharacters(in: .whitespaces) + " "
                if lines[end].contains(terminator) { break }
                end += 1
            }
            return (text, end)
        }
        while index < lines.count {
            let line = lines[index].trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("//!") {
                introduction.append(String(line.dropFirst(3)).trimmingCharacters(in: .whitespaces))
            } else if line.hasPrefix("//# ") {
                let text = String(line.dropFirst(4))
                guard let dot = text.firstIndex(of: "."), let number = Int(text[..<dot]) else {
                    throw GeneratorError(description: "\(file): a topic line is '//# n. Heading: …': \(line)")
                }
                group = number
                if groups[number]?.heading.isEmpty ?? true {
                    groups[number, default: Group()].heading = [text]
                }
            } else if line.hasPrefix("// C: warn_unused_result") {
                warnUnused = true
                index += 1
                continue
            } else if line.hasPrefix("///") {
                doc.append(String(line.dropFirst(3)).trimmingCharacters(in: .whitespaces))
                index += 1
                continue
            } else if line.hasPrefix("public enum deskaudio_"), line.contains(": Int32") {
                let name = String(line.dropFirst("public enum ".count).prefix { $0 != ":" })
                var body = comment(doc) + "typedef enum \(name) {\n"
                var caseDoc: [String] = []
                index += 1
                while index < lines.count, !lines[index].hasPrefix("}") {
                    let member = lines[index].trimmingCharacters(in: .whitespaces)
                    if member.hasPrefix("///") {
                        caseDoc.append(String(member.dropFirst(3)).trimmingCharacters(in: .whitespaces))
                    } else if member.hasPrefix("case ") {
                        let parts = member.dropFirst(5).split(separator: "=").map {
                            $0.trimmingCharacters(in: .whitespaces)
                        }
                        guard parts.count == 2 else {
                            throw GeneratorError(
                                description: "\(file): enum case needs an explicit value: \(member)")
                        }
                        body += comment(caseDoc, indent: "    ") + "    \(parts[0]) = \(parts[1]),\n"
                        caseDoc = []
                    }
                    index += 1
                }
                try requireGroup(file)
                enumCount += 1
                add(\.enums, body + "} \(name);\n")
            } else if line.hasPrefix("public let DESKAUDIO_") {
                let parts = line.dropFirst("public let ".count).split(separator: "=").map {
                    $0.trimmingCharacters(in: .whitespaces)
                }
                guard parts.count == 2, parts[0].hasSuffix(": Int32"), Int32(parts[1]) != nil else {
                    throw GeneratorError(description: "\(file): constant must be 'public let DESKAUDIO_X: Int32 = n': \(line)")
                }
                let name = String(parts[0].dropLast(": Int32".count))
                try requireGroup(file)
                add(\.defines, comment(doc) + "#define \(name) \(parts[1])\n")
            } else if line.hasPrefix("public typealias deskaudio_"), line.hasSuffix("= OpaquePointer") {
                let name = String(line.dropFirst("public typealias ".count).prefix { $0 != " " })
                opaqueTypes.insert(name)
                try requireGroup(file)
                typedefCount += 1
                add(\.typedefs, comment(doc) + "typedef struct \(name) \(name);\n")
            } else if line.hasPrefix("public typealias ") {
                let (text, end) = statement(from: index, until: "->")
                let name = String(text.dropFirst("public typealias ".count).prefix { $0 != " " && $0 != "=" })
                guard name.hasPrefix("deskaudio_"), let convention = text.range(of: "@convention(c)") else {
                    throw GeneratorError(
                        description:
                            "\(file): public typealias \(name) is not a deskaudio_ @convention(c) type")
                }
                let (parameters, tail) = try balancedParentheses(in: String(text[convention.upperBound...]))
                let returnType = try cReturnType(tail)
                try requireGroup(file)
                typedefCount += 1
                add(
                    \.typedefs,
                    comment(doc)
                        + "typedef \(declare(returnType, "(*\(name))"))(\(try cParameterList(parameters)));\n")
                index = end
            } else if line.hasPrefix("@_cdecl(\"") {
                let cName = String(line.dropFirst("@_cdecl(\"".count).prefix { $0 != "\"" })
                let (text, end) = statement(from: index + 1, until: "{")
                guard text.hasPrefix("public func ") else {
                    throw GeneratorError(
                        description: "\(file): @_cdecl(\"\(cName)\") must precede a public func")
                }
                guard !doc.isEmpty else {
                    throw GeneratorError(description: "\(file): \(cName) has no doc comment")
                }
                let (parameters, tail) = try balancedParentheses(in: text)
                let returnType = try cReturnType(tail)
                try requireGroup(file)
                let prefix = "DESKAUDIO_EXPORT " + (warnUnused ? "DESKAUDIO_WARN_UNUSED_RESULT " : "")
                functionCount += 1
                add(
                    \.functions,
                    comment(try functionDoc(doc, cName, parameterNames(parameters), returnsVoid: returnType == "void", file))
                        + prefix + "\(declare(returnType, cName))(\(try cParameterList(parameters)));\n")
                warnUnused = false
                index = end
            } else if line.hasPrefix("public ") {
                throw GeneratorError(
                    description: "\(file): '\(line)' is public but has no C form "
                        + "(C functions need @_cdecl; types must be deskaudio_ Int32 enums or @convention(c) typealiases)"
                )
            }
            doc = []
            index += 1
        }
    }

    private func requireGroup(_ file: String) throws {
        guard group > 0 else { throw GeneratorError(description: "\(file): public declarations before a '//# n. Heading' line") }
    }

    /// The doc comment of function `name` with @param and @return lines: its own
    /// `- Parameter`/`- Returns:` entries, or for a default-capture twin its original's.
    private mutating func functionDoc(
        _ lines: [String], _ name: String, _ parameters: [String], returnsVoid: Bool, _ file: String
    ) throws -> [String] {
        var (prose, documentedParameters, returns) = structuredDoc(lines)
        var byName = Dictionary(documentedParameters.map { ($0.0, $0.1) }, uniquingKeysWith: { first, _ in first })
        if let first = prose.first, first.hasSuffix("() on the default capture.") || first.hasSuffix("() of the default capture."),
            let original = documented[String(first.prefix { $0 != "(" })]
        {
            for parameter in parameters where byName[parameter] == nil { byName[parameter] = original.parameters[parameter] }
            if returns.isEmpty { returns = original.returns }
        }
        for parameter in parameters where byName[parameter] == nil {
            throw GeneratorError(description: "\(file): \(name): parameter \(parameter) has no '- Parameter' doc")
        }
        for documentedName in byName.keys where !parameters.contains(documentedName) {
            throw GeneratorError(description: "\(file): \(name) documents a parameter it does not have: \(documentedName)")
        }
        if !returnsVoid && returns.isEmpty {
            throw GeneratorError(description: "\(file): \(name) returns a value but has no '- Returns:' doc")
        }
        documented[name] = FunctionDoc(parameters: byName, returns: returns)
        var out = prose
        if !parameters.isEmpty || !returns.isEmpty { out.append("") }
        for parameter in parameters {
            let text = byName[parameter]!
            out.append("@param \(parameter) \(text[0])")
            out += text.dropFirst().map { "       " + $0 }
        }
        if !returns.isEmpty {
            out.append("@return \(returns[0])")
            out += returns.dropFirst().map { "        " + $0 }
        }
        return out
    }

    /// Takes the C structs between the BEGIN/END PUBLIC TYPES markers of deskaudio_types.h,
    /// each into the group its `/* GROUP n */` line names.
    mutating func readCTypes(_ source: String, file: String) throws {
        guard let begin = source.range(of: "/* BEGIN PUBLIC TYPES */\n"),
            let end = source.range(of: "/* END PUBLIC TYPES */", range: begin.upperBound..<source.endIndex)
        else { throw GeneratorError(description: "\(file): no BEGIN/END PUBLIC TYPES markers") }
        for block in String(source[begin.upperBound..<end.lowerBound]).components(separatedBy: "\n\n") {
            var lines = block.components(separatedBy: "\n").filter { !$0.isEmpty }
            guard let marker = lines.first, marker.hasPrefix("/* GROUP "),
                let number = Int(marker.dropFirst("/* GROUP ".count).prefix { $0.isNumber })
            else {
                if lines.isEmpty { continue }
                throw GeneratorError(description: "\(file): a public struct without a '/* GROUP n */' line before it")
            }
            lines.removeFirst()
            group = number
            add(\.structs, lines.joined(separator: "\n") + "\n")
        }
        group = 0
    }

    var text: String {
        var out =
            "/* include/deskaudio.h: generated by `swift run deskaudio-header` from Sources/DeskAudioC.\n"
        out += " * Do not edit; change the Swift sources and generate again. */\n"
        out += "#ifndef DESKAUDIO_H\n#define DESKAUDIO_H\n\n"
        out += comment(introduction)
        out += "\n#include <stdbool.h>\n#include <stddef.h>\n#include <stdint.h>\n\n"
        out += "/** Marks the library's functions as exported (the library is built with them visible). */\n"
        out += "#if defined(__GNUC__) || defined(__clang__)\n"
        out += "#define DESKAUDIO_EXPORT __attribute__((visibility(\"default\")))\n"
        out += "/** Marks a function whose result must be used: a handle, a count, a value. */\n"
        out += "#define DESKAUDIO_WARN_UNUSED_RESULT __attribute__((warn_unused_result))\n"
        out += "#else\n#define DESKAUDIO_EXPORT\n#define DESKAUDIO_WARN_UNUSED_RESULT\n#endif\n\n"
        out += "#ifdef __cplusplus\nextern \"C\" {\n#endif\n"
        for number in groups.keys.sorted() {
            let topic = groups[number]!
            out += "\n/* " + String(repeating: "=", count: 86) + "\n"
            out += topic.heading.map { " * \($0)\n" }.joined()
            out += " * " + String(repeating: "=", count: 86) + " */\n"
            for block in topic.defines + topic.enums + topic.structs + topic.typedefs + topic.functions {
                out += "\n" + block
            }
        }
        out += "\n#ifdef __cplusplus\n}\n#endif\n\n#endif /* DESKAUDIO_H */\n"
        return out
    }
}

func run() throws -> Int32 {
    var arguments = Array(CommandLine.arguments.dropFirst())
    let check = arguments.first == "--check"
    if check { arguments.removeFirst() }
    let sources = arguments.count > 0 ? arguments[0] : "Sources/DeskAudioC"
    let output = arguments.count > 1 ? arguments[1] : "include/deskaudio.h"
    let files = try FileManager.default.contentsOfDirectory(atPath: sources)
        .filter { $0.hasSuffix(".swift") }.sorted()
    var header = Header()
    let types = "\(sources)/../DeskAudioCTypes/include/deskaudio_types.h"
    try header.readCTypes(String(contentsOfFile: types, encoding: .utf8), file: types)
    for file in files {
        try header.read(String(contentsOfFile: "\(sources)/\(file)", encoding: .utf8), file: file)
    }
    let text = header.text
    if check {
        let current = try? String(contentsOfFile: output, encoding: .utf8)
        guard current == text else {
            FileHandle.standardError.write(
                Data(
                    "\(output) is stale: run `swift run deskaudio-header` and commit the result\n".utf8))
            return 1
        }
        print("\(output) is up to date")
        return 0
    }
    try text.write(toFile: output, atomically: true, encoding: .utf8)
    print(
        "wrote \(output): \(header.functionCount) functions, \(header.typedefCount) typedefs, \(header.enumCount) enums in \(header.groups.count) groups"
    )
    return 0
}

do {
    exit(try run())
} catch {
    FileHandle.standardError.write(Data("deskaudio-header: \(error)\n".utf8))
    exit(2)
}
