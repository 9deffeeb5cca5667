#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pipewire/pipewire.h>
#include <spa/interfaces/audio/aec.h>
#include <spa/param/audio/raw.h>
#include <spa/support/plugin.h>
#include <spa/utils/dict.h>
#include <spa/utils/names.h>

#include "deskaudio_webrtc_echo_shim.h"

struct deskaudio_webrtc_echo {
    struct spa_handle *handle;
    struct spa_audio_aec *aec;
};

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static const struct spa_handle_factory *aec_factory;
static char load_error[1024];

static void plugin_path(char *path, size_t size) {
    const char *folders = getenv("SPA_PLUGIN_DIR");
    if (folders && *folders) {
        snprintf(path, size, "%.*s/aec/libspa-aec-webrtc.so", (int)strcspn(folders, ":"), folders);
        return;
    }
    Dl_info info;
    const char *slash = NULL;
    if (dladdr((void *)pw_init, &info) && info.dli_fname) slash = strrchr(info.dli_fname, '/');
    if (slash) {
        snprintf(path, size, "%.*s/spa-0.2/aec/libspa-aec-webrtc.so", (int)(slash - info.dli_fname), info.dli_fname);
    } else {
        snprintf(path, size, "libspa-aec-webrtc.so");
    }
}

/* Whether the file at `path` names webrtc-audio-processing 1 or later among the libraries it
 * needs (its dynamic string table holds "libwebrtc-audio-processing-N.so"): 1 or 0, read
 * before loading it, so a plugin on 0.x never brings its C++ libraries into the host; -1
 * (errno set) when it cannot be read. */
static int names_aec3(const char *path) {
    static const char wanted[] = "libwebrtc-audio-processing-";
    FILE *file = fopen(path, "rb");
    if (!file) return -1;
    char buffer[65536 + sizeof wanted];
    size_t kept = 0, read;
    int found = 0;
    while (!found && (read = fread(buffer + kept, 1, sizeof buffer - kept, file)) > 0) {
        size_t length = kept + read;
        found = memmem(buffer, length, wanted, sizeof wanted - 1) != NULL;
        kept = length < sizeof wanted ? length : sizeof wanted - 1;
        memmove(buffer, buffer + length - kept, kept);
    }
    fclose(file);
    return found;
}

/* Whether the objects loaded with `library` include webrtc-audio-processing 1 or later
 * (libwebrtc-audio-processing-N.so), the first with AEC3; 0.x is libwebrtc_audio_processing.so. */
static int links_aec3(void *library) {
    struct link_map *map = NULL;
    if (dlinfo(library, RTLD_DI_LINKMAP, &map) != 0 || !map) return 0;
    while (map->l_prev) map = map->l_prev;
    for (; map; map = map->l_next) {
        if (map->l_name && strstr(map->l_name, "libwebrtc-audio-processing-")) return 1;
    }
    return 0;
}

static void load_plugin(void) {
    char path[400];
    plugin_path(path, sizeof path);
    int named = names_aec3(path);
    if (named < 0) {
        snprintf(load_error, sizeof load_error, "PipeWire's WebRTC echo canceller plugin is not here (%s): %s", path,
                 strerror(errno));
        return;
    }
    if (!named) {
        snprintf(load_error, sizeof load_error,
                 "%s is built on webrtc-audio-processing 0.x, which has no AEC3 (PipeWire built on 1.0 or later has)", path);
        return;
    }
    void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(load_error, sizeof load_error, "PipeWire's WebRTC echo canceller plugin would not load: %s", dlerror());
        return;
    }
    if (!links_aec3(library)) {
        snprintf(load_error, sizeof load_error,
                 "%s is built on webrtc-audio-processing 0.x, which has no AEC3 (PipeWire built on 1.0 or later has)", path);
        dlclose(library);
        return;
    }
    spa_handle_factory_enum_func_t enumerate =
        (spa_handle_factory_enum_func_t)dlsym(library, SPA_HANDLE_FACTORY_ENUM_FUNC_NAME);
    const struct spa_handle_factory *factory = NULL;
    uint32_t index = 0;
    while (enumerate && enumerate(&factory, &index) > 0) {
        if (factory && factory->name && strcmp(factory->name, SPA_NAME_AEC) == 0) {
            aec_factory = factory;
            return;
        }
    }
    snprintf(load_error, sizeof load_error, "%s has no echo canceller factory", path);
}

deskaudio_webrtc_echo *deskaudio_webrtc_echo_create(uint32_t rate, char *why, size_t why_size) {
    pthread_once(&load_once, load_plugin);
    if (!aec_factory) {
        snprintf(why, why_size, "%s", load_error);
        return NULL;
    }
    struct deskaudio_webrtc_echo *echo = calloc(1, sizeof *echo);
    struct spa_handle *handle = calloc(1, spa_handle_factory_get_size(aec_factory, NULL));
    void *interface = NULL;
    int result = -ENOMEM;
    if (echo && handle && (result = spa_handle_factory_init(aec_factory, handle, NULL, NULL, 0)) >= 0) {
        echo->handle = handle;
        result = spa_handle_get_interface(handle, SPA_TYPE_INTERFACE_AUDIO_AEC, &interface);
    }
    if (result >= 0) {
        echo->aec = interface;
        struct spa_audio_info_raw info = {
            .format = SPA_AUDIO_FORMAT_F32P, .rate = rate, .channels = 1, .position = {SPA_AUDIO_CHANNEL_MONO}};
        // The echo canceller and its high-pass filter only: the near end as it was spoken.
        const struct spa_dict_item items[] = {
            SPA_DICT_ITEM_INIT("webrtc.high_pass_filter", "true"),
            SPA_DICT_ITEM_INIT("webrtc.noise_suppression", "false"),
            SPA_DICT_ITEM_INIT("webrtc.voice_detection", "false"),
            SPA_DICT_ITEM_INIT("webrtc.transient_suppression", "false"),
            SPA_DICT_ITEM_INIT("webrtc.gain_control", "false"),
        };
        const struct spa_dict args = SPA_DICT_INIT_ARRAY(items);
        result = spa_audio_aec_init(echo->aec, &args, &info);
    }
    if (result < 0) {
        snprintf(why, why_size, "PipeWire's WebRTC echo canceller would not start: %s", strerror(-result));
        if (echo && echo->handle) spa_handle_clear(echo->handle);
        free(handle);
        free(echo);
        return NULL;
    }
    return echo;
}

int deskaudio_webrtc_echo_run(
    deskaudio_webrtc_echo *echo, const float *microphone, const float *speakers, float *out, uint32_t samples) {
    const float *recorded[1] = {microphone};
    const float *played[1] = {speakers};
    float *cancelled[1] = {out};
    return spa_audio_aec_run(echo->aec, recorded, played, cancelled, samples);
}

void deskaudio_webrtc_echo_destroy(deskaudio_webrtc_echo *echo) {
    if (!echo) return;
    spa_handle_clear(echo->handle);
    free(echo->handle);
    free(echo);
}
