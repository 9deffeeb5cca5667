/* Fixed-argument wrappers for PipeWire methods that its headers define only as macros
 * (pw_core_add_listener, pw_core_sync, pw_registry_add_listener, pw_metadata_add_listener,
 * pw_node_add_listener, pw_client_add_listener, pw_core_create_object,
 * pw_metadata_set_property),
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
DESKAUDIO_PW_SHIM_HIDDEN int deskaudio_shim_node_add_listener(
    struct pw_node *node, struct spa_hook *listener, const struct pw_node_events *events, void *data);

DESKAUDIO_PW_SHIM_HIDDEN int deskaudio_shim_client_add_listener(
    struct pw_client *client, struct spa_hook *listener, const struct pw_client_events *events, void *data);

/* Asks the daemon to link one output port to one input port (link-factory); the link belongs
 * to this client (no linger): destroying the proxy, or disconnecting, removes it. NULL on
 * failure (errno). */
DESKAUDIO_PW_SHIM_HIDDEN struct pw_proxy *deskaudio_shim_create_link(
    struct pw_core *core, uint32_t output_node, uint32_t output_port, uint32_t input_node, uint32_t input_port);

/* Sets (value non-NULL) or clears (NULL) one metadata property of `subject`. */
DESKAUDIO_PW_SHIM_HIDDEN int deskaudio_shim_metadata_set_property(
    struct pw_metadata *metadata, uint32_t subject, const char *key, const char *type, const char *value);

/* Asks the daemon for a silent stereo sink named `name` (support.null-audio-sink), owned by
 * this client (no linger). `priority` is its priority.session: 0, never picked as a default;
 * 1, picked only when no other sink is there. NULL on failure (errno). */
DESKAUDIO_PW_SHIM_HIDDEN struct pw_proxy *deskaudio_shim_create_null_sink(
    struct pw_core *core, const char *name, const char *description, int priority);

#endif
