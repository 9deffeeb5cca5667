#define _GNU_SOURCE
#include <pthread.h>
#include <string.h>

#include "deskaudio_thread_shim.h"

int deskaudio_shim_set_thread_name(pthread_t thread, const char *name) {
    char cut[16];
    strncpy(cut, name, sizeof cut - 1);
    cut[sizeof cut - 1] = '\0';
    return pthread_setname_np(thread, cut);
}
