#include "deskaudio_pulse_library.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static struct deskaudio_pulse_functions functions;
static char load_error[256];
static int load_status = -1;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load(void) {
    /* Never closed: libpulse keeps threads and atexit handlers of its own. */
    void *library = dlopen("libpulse.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(load_error, sizeof load_error, "cannot load libpulse.so.0: %s", dlerror());
        return;
    }
#define DESKAUDIO_PULSE_LOOKUP(name)                                                             \
    if (!(functions.name = (__typeof__(name) *)dlsym(library, #name))) {                         \
        snprintf(load_error, sizeof load_error, "libpulse.so.0 has no %s", #name);               \
        return;                                                                                  \
    }
    DESKAUDIO_PULSE_FUNCTIONS(DESKAUDIO_PULSE_LOOKUP)
#undef DESKAUDIO_PULSE_LOOKUP
    load_status = 0;
}

int deskaudio_pulse_load(char *error, size_t size) {
    pthread_once(&load_once, load);
    if (load_status != 0 && size > 0) snprintf(error, size, "%s", load_error);
    return load_status;
}

const struct deskaudio_pulse_functions *deskaudio_pulse(void) { return &functions; }
