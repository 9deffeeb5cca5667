/*
 * deskaudio-rdp-host: the machine's sound in any RDP client, and the client's microphone on the
 * machine, with no desktop (the client shows a black screen). A FreeRDP 3 server built on
 * deskaudio-rdp.h: one capture, fanned out to every client connected.
 *
 *   deskaudio-rdp-host [--port N] [--listen ADDRESS] [--certificate-dir DIR] [capture options]
 *   xfreerdp3 /v:HOST:PORT /u:me /p:PASSWORD /cert:ignore /sec:tls /sound /microphone
 *
 * docs/rdp.md lists the options. The password clients must give is DESKAUDIO_RDP_PASSWORD's
 * (environment, not argv); without it only --listen 127.0.0.1 (the default) is allowed.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <freerdp/channels/channels.h>
#include <freerdp/channels/wtsvc.h>
#include <freerdp/freerdp.h>
#include <freerdp/listener.h>
#include <freerdp/peer.h>
#include <freerdp/settings.h>
#include <winpr/path.h>
#include <winpr/ssl.h>
#include <winpr/tools/makecert.h>
#include <winpr/wtsapi.h>

#include "deskaudio-rdp.h"

#define TAG "com.deskaudio.rdp.host"

typedef struct host_options {
    long port;
    const char *listen;
    const char *certificate_dir;
    const char *password;
    deskaudio_rdp_options audio;
    bool app, mic;
    const char *app_device, *mic_device, *backend;
    const char *apps, *exclude_apps;
    bool mute_host;
    int32_t bitrate, frame_us;
    char certificate[4096], key[4096];
} host_options;

/* A connected client's peer context. */
typedef struct peer_context {
    rdpContext base;
    HANDLE vcm;
    deskaudio_rdp_audio *audio;
    unsigned number;
} peer_context;

/* The clients the capture's frames go to, owned by `lock`; the capture runs while there is one. */
static struct {
    pthread_mutex_t lock;
    deskaudio_rdp_audio *audio[64];
    size_t count;
} clients = { .lock = PTHREAD_MUTEX_INITIALIZER };

static host_options options;
static deskaudio_capture *capture;

static void fan_out(const uint8_t *frame, size_t len, void *user_data)
{
    (void)user_data;
    pthread_mutex_lock(&clients.lock);
    for (size_t i = 0; i < clients.count; i++) (void)deskaudio_rdp_audio_send(clients.audio[i], frame, len);
    pthread_mutex_unlock(&clients.lock);
}

static bool add_client(deskaudio_rdp_audio *audio)
{
    pthread_mutex_lock(&clients.lock);
    bool added = clients.count < 64;
    if (added) clients.audio[clients.count++] = audio;
    bool first = added && clients.count == 1;
    pthread_mutex_unlock(&clients.lock);
    if (first) {
        int32_t status = deskaudio_capture_enable(capture, options.mic, options.app);
        if (status != DESKAUDIO_OK)
            WLog_ERR(TAG, "the capture did not start: %s (%s)", deskaudio_strerror(status), deskaudio_last_error());
    }
    return added;
}

static void remove_client(deskaudio_rdp_audio *audio)
{
    pthread_mutex_lock(&clients.lock);
    bool found = false;
    for (size_t i = 0; i < clients.count; i++) {
        if (clients.audio[i] != audio) continue;
        clients.audio[i] = clients.audio[--clients.count];
        found = true;
        break;
    }
    bool last = found && clients.count == 0;
    pthread_mutex_unlock(&clients.lock);
    if (last) (void)deskaudio_capture_enable(capture, false, false);
}

static void log_stats(peer_context *context, const char *when)
{
    deskaudio_rdp_stats s;
    if (!context->audio || deskaudio_rdp_audio_get_stats(context->audio, &s, sizeof s) != DESKAUDIO_OK) return;
    fprintf(stderr,
            "deskaudio-rdp-host: client %u %s: codec %s, frames sent %llu, dropped late %llu, before a format %llu, "
            "invalid %llu, failed %llu, confirmations %llu, arrival %d ms, client render %d ms, microphone %s, "
            "microphone packets %llu, microphone frames %llu, microphone invalid %llu\n",
            context->number, when, s.codec == DESKAUDIO_RDP_OPUS ? "opus" : s.codec == DESKAUDIO_RDP_PCM ? "pcm" : s.codec < 0 ? "none-offered" : "not-chosen",
            (unsigned long long)s.frames_sent, (unsigned long long)s.frames_dropped_late,
            (unsigned long long)s.frames_before_format, (unsigned long long)s.frames_invalid,
            (unsigned long long)s.frames_failed, (unsigned long long)s.confirmations, s.arrival_ms, s.client_render_ms,
            s.microphone_open ? "open" : "closed", (unsigned long long)s.microphone_packets,
            (unsigned long long)s.microphone_frames, (unsigned long long)s.microphone_invalid);
}

static BOOL peer_context_new(freerdp_peer *peer, rdpContext *base)
{
    peer_context *context = (peer_context *)base;
    context->vcm = WTSOpenServerA((LPSTR)peer->context);
    return context->vcm && context->vcm != INVALID_HANDLE_VALUE;
}

static void peer_context_free(freerdp_peer *peer, rdpContext *base)
{
    (void)peer;
    peer_context *context = (peer_context *)base;
    if (context->audio) {
        remove_client(context->audio);
        log_stats(context, "left");
        deskaudio_rdp_audio_free(context->audio);
        context->audio = NULL;
    }
    if (context->vcm) WTSCloseServer(context->vcm);
}

static BOOL peer_post_connect(freerdp_peer *peer)
{
    rdpSettings *settings = peer->context->settings;
    const char *given = freerdp_settings_get_string(settings, FreeRDP_Password);
    if (options.password && (!given || strcmp(given, options.password) != 0)) {
        WLog_WARN(TAG, "a client from %s gave a wrong password: refused", peer->hostname);
        return FALSE;
    }
    return TRUE;
}

static BOOL peer_activate(freerdp_peer *peer)
{
    peer_context *context = (peer_context *)peer->context;
    if (context->audio) return TRUE;  /* activated again (a resize): the channels stay */
    context->audio = deskaudio_rdp_audio_new(peer, context->vcm, &options.audio);
    if (!context->audio) return FALSE;
    if (!add_client(context->audio)) {
        WLog_ERR(TAG, "64 clients are connected already: refused");
        return FALSE;
    }
    WLog_INFO(TAG, "client %u (%s) connected", context->number, peer->hostname);
    return TRUE;
}

static DWORD WINAPI peer_main(LPVOID argument)
{
    static unsigned numbers;
    freerdp_peer *peer = argument;
    peer->ContextSize = sizeof(peer_context);
    peer->ContextNew = peer_context_new;
    peer->ContextFree = peer_context_free;
    if (!freerdp_peer_context_new(peer)) {
        freerdp_peer_free(peer);
        return 0;
    }
    peer_context *context = (peer_context *)peer->context;
    context->number = __atomic_add_fetch(&numbers, 1, __ATOMIC_RELAXED);
    rdpSettings *settings = peer->context->settings;
    rdpPrivateKey *key = freerdp_key_new_from_file(options.key);
    rdpCertificate *certificate = freerdp_certificate_new_from_file(options.certificate);
    bool ready = key && certificate && freerdp_settings_set_pointer_len(settings, FreeRDP_RdpServerRsaKey, key, 1) &&
                 freerdp_settings_set_pointer_len(settings, FreeRDP_RdpServerCertificate, certificate, 1) &&
                 freerdp_settings_set_bool(settings, FreeRDP_RdpSecurity, FALSE) &&
                 freerdp_settings_set_bool(settings, FreeRDP_TlsSecurity, TRUE) &&
                 freerdp_settings_set_bool(settings, FreeRDP_NlaSecurity, FALSE) &&
                 freerdp_settings_set_uint32(settings, FreeRDP_ColorDepth, 32);
    peer->PostConnect = peer_post_connect;
    peer->Activate = peer_activate;
    if (!ready || !peer->Initialize(peer)) {
        WLog_ERR(TAG, "the connection from %s could not be set up (certificate %s, key %s)", peer->hostname,
                 options.certificate, options.key);
        freerdp_peer_context_free(peer);
        freerdp_peer_free(peer);
        return 0;
    }
    for (;;) {
        HANDLE handles[MAXIMUM_WAIT_OBJECTS] = { 0 };
        DWORD count = peer->GetEventHandles(peer, handles, 32);
        if (count == 0) break;
        HANDLE channels = WTSVirtualChannelManagerGetEventHandle(context->vcm);
        handles[count++] = channels;
        if (WaitForMultipleObjects(count, handles, FALSE, INFINITE) == WAIT_FAILED) break;
        if (!peer->CheckFileDescriptor(peer)) break;
        /* On every wake once the peer is active (R-RDP-DRDYNVC). */
        if (!peer->activated) continue;
        if (!WTSVirtualChannelManagerCheckFileDescriptor(context->vcm)) break;
        if (context->audio) (void)deskaudio_rdp_audio_check(context->audio);
    }
    WLog_INFO(TAG, "client %u (%s) disconnected", context->number, peer->hostname);
    peer->Disconnect(peer);
    freerdp_peer_context_free(peer);
    freerdp_peer_free(peer);
    return 0;
}

static BOOL peer_accepted(freerdp_listener *listener, freerdp_peer *peer)
{
    (void)listener;
    HANDLE thread = CreateThread(NULL, 0, peer_main, peer, 0, NULL);
    if (!thread) return FALSE;
    (void)CloseHandle(thread);
    return TRUE;
}

/* The TLS certificate and key in `dir`, made on first run (self-signed, as FreeRDP's shadow
 * server makes its own). */
static bool ensure_certificate(const char *dir)
{
    snprintf(options.certificate, sizeof options.certificate, "%s/deskaudio-rdp.crt", dir);
    snprintf(options.key, sizeof options.key, "%s/deskaudio-rdp.key", dir);
    if (access(options.certificate, R_OK) == 0 && access(options.key, R_OK) == 0) return true;
    if (!winpr_PathFileExists(dir) && !winpr_PathMakePath(dir, NULL)) {
        fprintf(stderr, "deskaudio-rdp-host: cannot make %s: %s\n", dir, strerror(errno));
        return false;
    }
    char *argv[] = { "makecert", "-rdp", "-live", "-silent", "-y", "5" };
    MAKECERT_CONTEXT *makecert = makecert_context_new();
    bool made = makecert && makecert_context_process(makecert, 6, argv) >= 0 &&
                makecert_context_set_output_file_name(makecert, "deskaudio-rdp") == 1 &&
                makecert_context_output_certificate_file(makecert, dir) == 1 &&
                makecert_context_output_private_key_file(makecert, dir) == 1;
    makecert_context_free(makecert);
    if (made) chmod(options.key, 0600);
    fprintf(stderr, made ? "deskaudio-rdp-host: made a certificate in %s\n" : "deskaudio-rdp-host: could not make a certificate in %s\n", dir);
    return made;
}

/* "a,b,c" into deskaudio_capture_set_apps(). */
static int32_t set_apps(int32_t mode, const char *list)
{
    char *copy = strdup(list);
    const char *names[64];
    size_t count = 0;
    for (char *save = NULL, *name = strtok_r(copy, ",", &save); name && count < 64; name = strtok_r(NULL, ",", &save))
        names[count++] = name;
    int32_t status = deskaudio_capture_set_apps(capture, mode, names, count, false);
    free(copy);
    return status;
}

static int usage(const char *problem)
{
    if (problem) fprintf(stderr, "deskaudio-rdp-host: %s\n", problem);
    fprintf(stderr,
            "usage: deskaudio-rdp-host [--port N] [--listen ADDRESS] [--certificate-dir DIR]\n"
            "         [--codecs opus,pcm] [--max-late-ms MS] [--microphone NAME | --no-microphone] [--dynamic-channel]\n"
            "         [--no-app] [--mic] [--app-device NAME] [--mic-device NAME] [--apps A,B | --exclude-apps A,B]\n"
            "         [--mute-host] [--bitrate BPS] [--frame-ms 2.5|5|10|20] [--backend pipewire|pulse]\n"
            "  DESKAUDIO_RDP_PASSWORD: the password clients give (needed to listen beyond 127.0.0.1)\n");
    return 2;
}

static volatile sig_atomic_t stopping;
static void on_signal(int number) { (void)number; stopping = 1; }

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);  /* WLog writes its lower levels to stdout */
    options = (host_options){ .port = 3389, .listen = "127.0.0.1", .app = true, .bitrate = 0, .frame_us = 0 };
    options.audio.size = sizeof options.audio;
    options.audio.microphone_name = "deskaudio_rdp_mic";
    options.audio.microphone_description = "RDP client's microphone";
    options.password = getenv("DESKAUDIO_RDP_PASSWORD");
    static char default_dir[4096];
    const char *config = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
    snprintf(default_dir, sizeof default_dir, "%s%s/deskaudio-rdp", config ? config : home ? home : "/tmp", config ? "" : "/.config");
    options.certificate_dir = default_dir;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
#define VALUE() (i++, value) /* each use is after a check that value is there */
        if (!strcmp(arg, "--port") && value) options.port = strtol(VALUE(), NULL, 10);
        else if (!strcmp(arg, "--listen") && value) options.listen = VALUE();
        else if (!strcmp(arg, "--certificate-dir") && value) options.certificate_dir = VALUE();
        else if (!strcmp(arg, "--codecs") && value) {
            const char *codecs = VALUE();
            options.audio.codecs = (strstr(codecs, "opus") ? DESKAUDIO_RDP_OPUS : 0) | (strstr(codecs, "pcm") ? DESKAUDIO_RDP_PCM : 0);
            if (!options.audio.codecs) return usage("--codecs takes opus, pcm or opus,pcm");
        } else if (!strcmp(arg, "--max-late-ms") && value) options.audio.max_late_ms = (uint32_t)strtoul(VALUE(), NULL, 10);
        else if (!strcmp(arg, "--microphone") && value) options.audio.microphone_name = VALUE();
        else if (!strcmp(arg, "--no-microphone")) options.audio.microphone_name = NULL;
        else if (!strcmp(arg, "--dynamic-channel")) options.audio.dynamic_channel = true;
        else if (!strcmp(arg, "--no-app")) options.app = false;
        else if (!strcmp(arg, "--mic")) options.mic = true;
        else if (!strcmp(arg, "--app-device") && value) options.app_device = VALUE();
        else if (!strcmp(arg, "--mic-device") && value) options.mic_device = VALUE();
        else if (!strcmp(arg, "--apps") && value) options.apps = VALUE();
        else if (!strcmp(arg, "--exclude-apps") && value) options.exclude_apps = VALUE();
        else if (!strcmp(arg, "--mute-host")) options.mute_host = true;
        else if (!strcmp(arg, "--bitrate") && value) options.bitrate = (int32_t)strtol(VALUE(), NULL, 10);
        else if (!strcmp(arg, "--frame-ms") && value) options.frame_us = (int32_t)(strtod(VALUE(), NULL) * 1000);
        else if (!strcmp(arg, "--backend") && value) options.backend = VALUE();
        else return usage(arg[0] == '-' && strcmp(arg, "--help") ? "an unknown option, or one without its value" : NULL);
#undef VALUE
    }
    if (options.port < 1 || options.port > 65535) return usage("--port takes 1 to 65535");
    if (!options.app && !options.mic) return usage("--no-app without --mic records nothing");
    if (!options.password && strcmp(options.listen, "127.0.0.1") && strcmp(options.listen, "::1"))
        return usage("listening beyond this machine needs a password: set DESKAUDIO_RDP_PASSWORD");

    capture = deskaudio_capture_create();
    if (!capture) return fprintf(stderr, "deskaudio-rdp-host: %s\n", deskaudio_last_error()), 1;
    int32_t status = DESKAUDIO_OK;
    const char *setting = "";
#define APPLY(name, call) if (status == DESKAUDIO_OK) { setting = name; status = (call); }
    if (options.backend) APPLY("--backend", deskaudio_capture_set_backend(capture, options.backend));
    if (options.app_device) APPLY("--app-device", deskaudio_capture_set_app_device(capture, options.app_device));
    if (options.mic_device) APPLY("--mic-device", deskaudio_capture_set_mic_device(capture, options.mic_device));
    if (options.apps) APPLY("--apps", set_apps(DESKAUDIO_APPS_ONLY, options.apps));
    if (options.exclude_apps) APPLY("--exclude-apps", set_apps(DESKAUDIO_APPS_ALL_EXCEPT, options.exclude_apps));
    if (options.mute_host) APPLY("--mute-host", deskaudio_capture_set_mute_host(capture, true));
    if (options.bitrate) APPLY("--bitrate", deskaudio_capture_set_bitrate(capture, options.bitrate));
    if (options.frame_us) APPLY("--frame-ms", deskaudio_capture_set_frame_duration(capture, options.frame_us));
#undef APPLY
    if (status != DESKAUDIO_OK) {
        fprintf(stderr, "deskaudio-rdp-host: %s: %s (%s)\n", setting, deskaudio_strerror(status), deskaudio_last_error());
        return 2;
    }
    (void)deskaudio_capture_set_frame_callback(capture, fan_out, NULL);
    if (!ensure_certificate(options.certificate_dir)) return 1;

    WTSRegisterWtsApiFunctionTable(FreeRDP_InitWtsApi());
    winpr_InitializeSSL(WINPR_SSL_INIT_DEFAULT);
    freerdp_listener *listener = freerdp_listener_new();
    if (!listener) return 1;
    listener->PeerAccepted = peer_accepted;
    if (!listener->Open(listener, options.listen, (UINT16)options.port)) {
        fprintf(stderr, "deskaudio-rdp-host: cannot listen on %s port %ld\n", options.listen, options.port);
        freerdp_listener_free(listener);
        return 1;
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGPIPE, SIG_IGN);
    fprintf(stderr, "deskaudio-rdp-host: listening on %s port %ld (xfreerdp3 /v:%s:%ld /cert:ignore /sec:tls /sound /microphone)\n",
            options.listen, options.port, options.listen, options.port);
    while (!stopping) {
        HANDLE handles[32];
        DWORD count = listener->GetEventHandles(listener, handles, 32);
        if (count == 0 || WaitForMultipleObjects(count, handles, FALSE, 200) == WAIT_FAILED) break;
        if (!listener->CheckFileDescriptor(listener)) break;
    }
    listener->Close(listener);
    freerdp_listener_free(listener);
    deskaudio_capture_destroy(capture);
    return 0;
}
