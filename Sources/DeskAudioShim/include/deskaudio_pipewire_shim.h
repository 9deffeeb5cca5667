/* Fixed-argument wrappers for PipeWire methods that its headers define only as macros
 * (pw_core_add_listener, pw_core_sync, pw_registry_add_listener, pw_metadata_add_listener),
 * which Swift cannot call. Hidden: they never leave libdeskaudio.so. */
#ifndef DESKAUDIO_PIPEWIRE_SHIM_H
#define DESKAUDIO_PIPEWIRE_SHIM_H

#include <pipewire/pipewire.h>
#include <pipewire/extensions/metadata.h>

#define DESKAUDIO_PW_SHIM_HIDDEN __attribute__((visibility("hidden")))

DESKAUDIO_PW_SHIM_HIDDEN int deskaudio_shim_core_add_listener(
    struct pw_core *core, struct spa_hook *listener, const struct pw_core_events *events, void *data);
DESKAUDIO_PW_SHIM_HIDDEN int deskaudio_shim_core_sync(struct pw_core *core, uint32_t id, int seq);
DESKAUDIO_PW_SHIM_HIDDEN int deskaudio_shim_registry_add_listener(
    struct pw_registry *registry, struct spa_hook *listener, const struct pw_registry_events *events,
    void *data);
DESKAUDIO_PW_SHIM_HIDDEN int deskaudio_shim_metadata_add_listener(
    struct pw_metadata *metadata, struct spa_hook *listener, const struct pw_metadata_events *events,
    void *data);

#endif
