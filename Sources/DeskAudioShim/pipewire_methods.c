#include "deskaudio_pipewire_shim.h"

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
