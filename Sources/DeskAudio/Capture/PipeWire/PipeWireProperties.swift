import CPipeWire

/// A global's properties as the registry hands them over (valid only during that call),
/// read by key: `properties[PW_KEY_NODE_NAME]`.
struct PipeWireProperties {
    /// The dictionary itself.
    let dict: UnsafePointer<spa_dict>

    /// The value of `key`, if the global has it.
    subscript(_ key: String) -> String? {
        spa_dict_lookup(dict, key).map { String(cString: $0) }
    }
}
