/* Names a library thread: pthread_setname_np is a GNU extension that Glibc's Swift module
 * does not show. Hidden: it never leaves libdeskaudio.so. */
#ifndef DESKAUDIO_THREAD_SHIM_H
#define DESKAUDIO_THREAD_SHIM_H

#include <pthread.h>

/* Sets `thread`'s name (at most 15 characters; longer is cut); returns 0 or an errno. */
__attribute__((visibility("hidden"))) int deskaudio_shim_set_thread_name(pthread_t thread, const char *name);

#endif
