#include "deskaudio_pipewire_shim.h"
#include <stdio.h>

int deskaudio_shim_core_add_listener(
    struct pw_core *core, struct spa_hook *listener, const struct pw_core_events *events, void *data) {
    return pw_core_add_listener(core, listener, events, data);
}

int deskaudio_shim_core_sync(struct pw_core *core, uint32_t id, int seq) {
    return pw_core_sync(core, id, seq);
}

int deskaudio_shim_registry_add_listener(
    struct pw_registry *registry, struct spa_hook *listener, const struct pw_registry_events *events,
    void *data) {
    return pw_registry_add_listener(registry, listener, events, data);
}

int deskaudio_shim_metadata_add_listener(
    struct pw_metadata *metadata, struct spa_hook *listener, const struct pw_metadata_events *events,
    void *data) {
    return pw_metadata_add_listener(metadata, listener, events, data);
}

struct pw_proxy *deskaudio_shim_create_link(
    struct pw_core *core, uint32_t output_node, uint32_t output_port, uint32_t input_node, uint32_t input_port) {
    char values[4][16];
    snprintf(values[0], sizeof values[0], "%u", output_node);
    snprintf(values[1], sizeof values[1], "%u", output_port);
    snprintf(values[2], sizeof values[2], "%u", input_node);
    snprintf(values[3], sizeof values[3], "%u", input_port);
    struct spa_dict_item items[] = {
        SPA_DICT_ITEM_INIT(PW_KEY_LINK_OUTPUT_NODE, values[0]),
        SPA_DICT_ITEM_INIT(PW_KEY_LINK_OUTPUT_PORT, values[1]),
        SPA_DICT_ITEM_INIT(PW_KEY_LINK_INPUT_NODE, values[2]),
        SPA_DICT_ITEM_INIT(PW_KEY_LINK_INPUT_PORT, values[3]),
        /* Owned by this client: gone when it disconnects or destroys the proxy. */
        SPA_DICT_ITEM_INIT(PW_KEY_OBJECT_LINGER, "false"),
    };
    struct spa_dict properties = SPA_DICT_INIT_ARRAY(items);
    return pw_core_create_object(core, "link-factory", PW_TYPE_INTERFACE_Link, PW_VERSION_LINK, &properties, 0);
}

int deskaudio_shim_node_add_listener(
    struct pw_node *node, struct spa_hook *listener, const struct pw_node_events *events, void *data) {
    return pw_node_add_listener(node, listener, events, data);
}

int deskaudio_shim_client_add_listener(
    struct pw_client *client, struct spa_hook *listener, const struct pw_client_events *events, void *data) {
    return pw_client_add_listener(client, listener, events, data);
}

int deskaudio_shim_metadata_set_property(
    struct pw_metadata *metadata, uint32_t subject, const char *key, const char *type, const char *value) {
    return pw_metadata_set_property(metadata, subject, key, type, value);
}

struct pw_proxy *deskaudio_shim_create_null_sink(
    struct pw_core *core, const char *name, const char *description, int priority) {
    char priority_text[16];
    snprintf(priority_text, sizeof priority_text, "%d", priority);
    struct spa_dict_item items[] = {
        SPA_DICT_ITEM_INIT(PW_KEY_FACTORY_NAME, "support.null-audio-sink"),
        SPA_DICT_ITEM_INIT(PW_KEY_NODE_NAME, name),
        SPA_DICT_ITEM_INIT(PW_KEY_NODE_DESCRIPTION, description),
        SPA_DICT_ITEM_INIT(PW_KEY_MEDIA_CLASS, "Audio/Sink"),
        SPA_DICT_ITEM_INIT("audio.position", "FL,FR"),
        SPA_DICT_ITEM_INIT(PW_KEY_NODE_VIRTUAL, "true"),
        /* The session manager's pick for a default sink by priority: 0 never, 1 last. */
        SPA_DICT_ITEM_INIT(PW_KEY_PRIORITY_SESSION, priority_text),
        SPA_DICT_ITEM_INIT(PW_KEY_PRIORITY_DRIVER, priority_text),
        /* Owned by this client: gone when it disconnects or destroys the proxy. */
        SPA_DICT_ITEM_INIT(PW_KEY_OBJECT_LINGER, "false"),
    };
    struct spa_dict properties = SPA_DICT_INIT_ARRAY(items);
    return pw_core_create_object(core, "adapter", PW_TYPE_INTERFACE_Node, PW_VERSION_NODE, &properties, 0);
}
