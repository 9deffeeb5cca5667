/* deskaudio-rdp.h's adapter: one peer's audio output (rdpsnd) and input (audin) channels. */
#include "deskaudio-rdp.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <freerdp/channels/drdynvc.h>
#include <freerdp/channels/rdpsnd.h>
#include <freerdp/codec/audio.h>
#include <freerdp/log.h>
#include <freerdp/server/audin.h>
#include <freerdp/server/rdpsnd.h>

#include "rdp_policy.h"

#define TAG "com.deskaudio.rdp"
#define DEFAULT_MAX_LATE_MS 200
#define PCM_MAX DESKAUDIO_DECODER_MAX_SAMPLES
#define WAVE2_VERSION 8 /* MS-RDPEA: clients of version 8 and up take Wave2 PDUs */

/* The output side: everything the capture's thread (send), FreeRDP's rdpsnd thread (activated,
 * confirm) and the peer's thread (check, free) share, owned by `lock`. */
typedef struct output_side {
    pthread_mutex_t lock;
    RdpsndServerContext *rdpsnd;
    bool started;
    bool closing;
    int client_format;           /* the client's index of the format chosen; -1 none */
    int codec;                   /* RDP_CODEC_*; -1 when the client lists none of ours */
    rdp_block_ledger ledger;
    bool late_reported;
    deskaudio_decoder *decoder;  /* PCM clients, and surround frames for Opus clients */
    deskaudio_encoder *reencoder;
    float pcm[PCM_MAX * 2];
    int16_t s16[PCM_MAX * 2];
    uint32_t audio_time_ms;      /* the frame being sent's capture time, for re-encoded frames */
    deskaudio_rdp_stats stats;
} output_side;

/* The input side: FreeRDP's audin thread alone uses it while the channel is open; the peer's
 * thread opens and closes it. */
typedef struct input_side {
    audin_server_context *audin;
    bool opened;
    int client_format;
    rdp_wave_format format;
    deskaudio_encoder *encoder;
    deskaudio_remote_mic *microphone;
    char *name;
    char *description;
} input_side;

struct deskaudio_rdp_audio {
    freerdp_peer *peer;
    HANDLE vcm;
    uint32_t codecs;
    uint32_t max_late_ms;
    bool dynamic_channel;
    output_side out;
    input_side in;
};

static uint64_t now_ms(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000u + (uint64_t)now.tv_nsec / 1000000u;
}

static rdp_wave_format wave_format_of(const AUDIO_FORMAT *format)
{
    return (rdp_wave_format){ format->wFormatTag, format->nChannels, format->nSamplesPerSec, format->wBitsPerSample };
}

static void audio_format_from(AUDIO_FORMAT *format, const rdp_wave_format *wave)
{
    format->wFormatTag = wave->tag;
    format->nChannels = wave->channels;
    format->nSamplesPerSec = wave->rate;
    format->wBitsPerSample = wave->bits;
    format->nBlockAlign = (uint16_t)(wave->channels * wave->bits / 8);
    format->nAvgBytesPerSec = wave->tag == RDP_WAVE_FORMAT_OPUS ? 16000 : wave->rate * format->nBlockAlign;
    format->cbSize = 0;
}

/* ---- output ---- */

static void rdpsnd_activated(RdpsndServerContext *context)
{
    deskaudio_rdp_audio *audio = context->data;
    output_side *out = &audio->out;
    rdp_wave_format client[256];  /* the first 256 the client lists */
    size_t count = context->num_client_formats < 256 ? context->num_client_formats : 256;
    for (size_t i = 0; i < count; i++) client[i] = wave_format_of(&context->client_formats[i]);

    pthread_mutex_lock(&out->lock);
    out->stats.client_version = context->clientVersion;
    int codec = RDP_CODEC_NONE;
    int index = context->clientVersion >= WAVE2_VERSION ? rdp_choose_output(client, count, audio->codecs, &codec) : -1;
    out->client_format = index;
    out->codec = index < 0 ? -1 : codec;
    out->stats.codec = out->codec;
    rdp_ledger_reset(&out->ledger);
    out->late_reported = false;
    pthread_mutex_unlock(&out->lock);

    if (context->clientVersion < WAVE2_VERSION) {
        WLog_WARN(TAG, "the client's audio protocol version %u has no Wave2 PDU (8 and up): it gets no audio",
                  (unsigned)context->clientVersion);
    } else if (index < 0) {
        char listed[512] = "";
        size_t used = 0;
        for (size_t i = 0; i < count && used < sizeof listed - 48; i++)
            used += (size_t)snprintf(listed + used, sizeof listed - used, "%s0x%04x %u Hz %u ch %u bit", i ? ", " : "",
                                     client[i].tag, client[i].rate, client[i].channels, client[i].bits);
        WLog_WARN(TAG, "the client lists no format DeskAudio sends (Opus or 16-bit PCM, 48 kHz stereo; it lists %s): "
                       "it gets no audio", count ? listed : "none");
    } else {
        WLog_INFO(TAG, "the client plays %s (its format %d, protocol version %u)",
                  codec == RDP_CODEC_OPUS ? "Opus 48 kHz stereo" : "PCM 48 kHz stereo 16-bit", index,
                  (unsigned)context->clientVersion);
    }
}

static UINT rdpsnd_confirm_block(RdpsndServerContext *context, BYTE block, UINT16 timestamp)
{
    deskaudio_rdp_audio *audio = context->data;
    pthread_mutex_lock(&audio->out.lock);
    rdp_ledger_confirmed(&audio->out.ledger, block, timestamp, now_ms());
    pthread_mutex_unlock(&audio->out.lock);
    return CHANNEL_RC_OK;
}

static bool start_output(deskaudio_rdp_audio *audio, bool dynamic)
{
    output_side *out = &audio->out;
    RdpsndServerContext *rdpsnd = rdpsnd_server_context_new(audio->vcm);
    if (!rdpsnd) return false;
    rdp_wave_format formats[2];
    size_t count = rdp_output_formats(audio->codecs, formats);
    rdpsnd->server_formats = audio_formats_new(count);  /* rdpsnd_server_context_free frees it */
    if (!rdpsnd->server_formats) {
        rdpsnd_server_context_free(rdpsnd);
        return false;
    }
    for (size_t i = 0; i < count; i++) audio_format_from(&rdpsnd->server_formats[i], &formats[i]);
    rdpsnd->num_server_formats = count;
    rdpsnd->src_format = &rdpsnd->server_formats[count - 1];
    rdpsnd->use_dynamic_virtual_channel = dynamic;
    rdpsnd->data = audio;
    rdpsnd->rdpcontext = audio->peer->context;
    rdpsnd->Activated = rdpsnd_activated;
    rdpsnd->ConfirmBlock = rdpsnd_confirm_block;
    /* The context is set before its thread starts: Activated may take the lock at once. */
    pthread_mutex_lock(&out->lock);
    out->rdpsnd = rdpsnd;
    pthread_mutex_unlock(&out->lock);
    if (rdpsnd->Initialize(rdpsnd, TRUE) != CHANNEL_RC_OK) {
        WLog_ERR(TAG, "the %s audio output channel did not open", dynamic ? "dynamic" : "static");
        pthread_mutex_lock(&out->lock);
        out->rdpsnd = NULL;
        pthread_mutex_unlock(&out->lock);
        rdpsnd_server_context_free(rdpsnd);
        return false;
    }
    WLog_INFO(TAG, "audio output opened (the %s channel)", dynamic ? "dynamic" : "static");
    return true;
}

/* Sends `size` bytes as one block in the client's format; the lock is held. */
static int32_t send_block(output_side *out, const void *data, size_t size, uint32_t audio_time_ms)
{
    uint8_t block = out->rdpsnd->block_no;  /* SendSamples2 numbers the block so, then counts on */
    uint16_t stamp = rdp_ledger_sent(&out->ledger, block, now_ms());
    UINT status = out->rdpsnd->SendSamples2(out->rdpsnd, (UINT16)out->client_format, data, size, stamp, audio_time_ms);
    if (status != CHANNEL_RC_OK) {
        rdp_ledger_unsent(&out->ledger, block);  /* else its confirmation, never coming, holds every frame back */
        out->stats.frames_failed++;
        return DESKAUDIO_ERROR_STREAM;
    }
    out->stats.frames_sent++;
    return DESKAUDIO_OK;
}

static void send_reencoded(const uint8_t *frame, size_t len, void *user_data)
{
    output_side *out = user_data;
    deskaudio_frame_info info;
    if (deskaudio_parse_frame(frame, len, &info, sizeof info) == DESKAUDIO_OK)
        (void)send_block(out, info.payload, info.payload_length, out->audio_time_ms);
}

int32_t deskaudio_rdp_audio_send(deskaudio_rdp_audio *audio, const uint8_t *frame, size_t len)
{
    if (!audio || !frame) return DESKAUDIO_ERROR_INVALID_ARGUMENT;
    output_side *out = &audio->out;
    deskaudio_frame_info info;
    int32_t parsed = deskaudio_parse_frame(frame, len, &info, sizeof info);
    pthread_mutex_lock(&out->lock);
    if (parsed != DESKAUDIO_OK) {
        out->stats.frames_invalid++;
        pthread_mutex_unlock(&out->lock);
        return parsed;
    }
    if (out->closing || !out->rdpsnd || out->codec <= RDP_CODEC_NONE) {
        out->stats.frames_before_format++;
        pthread_mutex_unlock(&out->lock);
        return DESKAUDIO_OK;
    }
    /* Decoded whether sent or not: the decoder's state follows every frame. */
    bool surround = info.codec != 1;
    int32_t samples = 0;
    if (out->codec == RDP_CODEC_PCM || surround) {
        samples = deskaudio_decoder_decode(out->decoder, frame, len, out->pcm, PCM_MAX);
        if (samples < 0) {
            out->stats.frames_invalid++;
            pthread_mutex_unlock(&out->lock);
            return samples;
        }
    }
    uint64_t now = now_ms();
    if (!rdp_ledger_may_send(&out->ledger, now, audio->max_late_ms)) {
        out->stats.frames_dropped_late++;
        if (!out->late_reported)
            WLog_WARN(TAG, "the client confirmed no audio for %llu ms (bound %u ms): frames are dropped until it does",
                      (unsigned long long)rdp_ledger_oldest_ms(&out->ledger, now), audio->max_late_ms);
        out->late_reported = true;
        pthread_mutex_unlock(&out->lock);
        return DESKAUDIO_OK;
    }
    if (out->late_reported) WLog_INFO(TAG, "the client caught up: frames are sent again");
    out->late_reported = false;
    uint32_t audio_time_ms = (uint32_t)(info.capture_time_ns / 1000000u);
    int32_t status = DESKAUDIO_OK;
    if (out->codec == RDP_CODEC_OPUS && !surround) {
        status = send_block(out, info.payload, info.payload_length, audio_time_ms);
    } else if (out->codec == RDP_CODEC_OPUS) {
        out->audio_time_ms = audio_time_ms;
        int32_t taken = deskaudio_encoder_push_pcm(out->reencoder, out->pcm, (size_t)samples * 2 * sizeof(float),
                                                   DESKAUDIO_PCM_F32, 2, 48000, 0, send_reencoded, out);
        if (taken < 0) status = taken;
    } else {
        for (int32_t i = 0; i < samples * 2; i++) {
            float sample = out->pcm[i] * 32768.0f;
            out->s16[i] = sample >= 32767.0f ? 32767 : sample <= -32768.0f ? -32768 : (int16_t)sample;
        }
        status = send_block(out, out->s16, (size_t)samples * 2 * sizeof(int16_t), audio_time_ms);
    }
    pthread_mutex_unlock(&out->lock);
    return status;
}

/* ---- input ---- */

static UINT audin_receive_formats(audin_server_context *context, const SNDIN_FORMATS *formats)
{
    deskaudio_rdp_audio *audio = context->userdata;
    input_side *in = &audio->in;
    rdp_wave_format client[256];  /* the first 256 the client lists */
    size_t count = formats->NumFormats < 256 ? formats->NumFormats : 256;
    for (size_t i = 0; i < count; i++) client[i] = wave_format_of(&formats->SoundFormats[i]);
    int index = rdp_choose_input(client, count);
    if (index < 0) {
        WLog_WARN(TAG, "the client's microphone offers no 16-bit PCM at 48 or 44.1 kHz: it is not used");
        return CHANNEL_RC_OK;
    }
    in->client_format = index;
    in->format = client[index];
    SNDIN_OPEN open = { 0 };
    open.FramesPerPacket = in->format.rate / 100;  /* 10 ms */
    open.initialFormat = (UINT32)index;
    audio_format_from(&open.captureFormat, &in->format);
    WLog_INFO(TAG, "the client's microphone sends PCM %u Hz, %u channel(s), 10 ms packets", in->format.rate,
              (unsigned)in->format.channels);
    return context->SendOpen(context, &open);
}

static UINT audin_receive_format_change(audin_server_context *context, const SNDIN_FORMATCHANGE *change)
{
    deskaudio_rdp_audio *audio = context->userdata;
    if ((int)change->NewFormat != audio->in.client_format) {
        WLog_WARN(TAG, "the client's microphone changed to a format not asked for (%u): it is not used",
                  (unsigned)change->NewFormat);
        audio->in.client_format = -1;
    }
    return CHANNEL_RC_OK;
}

static void feed_microphone(const uint8_t *frame, size_t len, void *user_data)
{
    deskaudio_rdp_audio *audio = user_data;
    (void)deskaudio_remote_mic_feed(audio->in.microphone, frame, len);  /* refusals: the microphone counts them */
    pthread_mutex_lock(&audio->out.lock);
    audio->out.stats.microphone_frames++;
    pthread_mutex_unlock(&audio->out.lock);
}

static UINT audin_data(audin_server_context *context, const SNDIN_DATA *data)
{
    deskaudio_rdp_audio *audio = context->userdata;
    input_side *in = &audio->in;
    size_t bytes = Stream_GetRemainingLength(data->Data);
    size_t frame_bytes = (size_t)in->format.channels * 2;
    bool usable = in->client_format >= 0 && frame_bytes > 0 && bytes % frame_bytes == 0;
    int32_t taken = usable ? deskaudio_encoder_push_pcm(in->encoder, Stream_ConstPointer(data->Data), bytes, DESKAUDIO_PCM_S16,
                                                        in->format.channels, (int32_t)in->format.rate, 0, feed_microphone, audio)
                           : DESKAUDIO_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&audio->out.lock);
    if (taken < 0) audio->out.stats.microphone_invalid++;
    else audio->out.stats.microphone_packets++;
    pthread_mutex_unlock(&audio->out.lock);
    return CHANNEL_RC_OK;  /* a bad packet is the client's; the channel stays */
}

static bool open_input(deskaudio_rdp_audio *audio)
{
    input_side *in = &audio->in;
    in->opened = true;  /* tried once */
    in->microphone = deskaudio_remote_mic_create(in->name, in->description ? in->description : in->name, NULL, NULL);
    in->encoder = in->microphone ? deskaudio_encoder_create() : NULL;
    in->audin = in->encoder ? audin_server_context_new(audio->vcm) : NULL;
    if (!in->audin) {
        WLog_ERR(TAG, "the remote microphone %s could not be made: %s", in->name, deskaudio_last_error());
        return false;
    }
    rdp_wave_format formats[4];
    AUDIO_FORMAT offered[4] = { 0 };
    size_t count = rdp_input_formats(formats);
    for (size_t i = 0; i < count; i++) audio_format_from(&offered[i], &formats[i]);
    in->client_format = -1;
    in->audin->userdata = audio;
    in->audin->rdpcontext = audio->peer->context;
    in->audin->ReceiveFormats = audin_receive_formats;
    in->audin->ReceiveFormatChange = audin_receive_format_change;
    in->audin->Data = audin_data;
    if (!audin_server_set_formats(in->audin, (SSIZE_T)count, offered) || !in->audin->Open(in->audin)) {
        WLog_ERR(TAG, "the audio input channel did not open");
        return false;
    }
    pthread_mutex_lock(&audio->out.lock);
    audio->out.stats.microphone_open = 1;
    pthread_mutex_unlock(&audio->out.lock);
    return true;
}

static void close_input(input_side *in)
{
    if (in->audin) audin_server_context_free(in->audin);  /* joins its thread */
    in->audin = NULL;
    deskaudio_encoder_destroy(in->encoder);
    in->encoder = NULL;
    deskaudio_remote_mic_destroy(in->microphone);
    in->microphone = NULL;
}

/* ---- the peer's side ---- */

deskaudio_rdp_audio *deskaudio_rdp_audio_new(freerdp_peer *peer, HANDLE vcm, const deskaudio_rdp_options *options)
{
    deskaudio_rdp_options defaults = { .size = sizeof defaults };
    if (!options) options = &defaults;
    if (!peer || !vcm || options->size < sizeof(deskaudio_rdp_options) ||
        (options->codecs & ~(uint32_t)(DESKAUDIO_RDP_OPUS | DESKAUDIO_RDP_PCM))) {
        WLog_ERR(TAG, "deskaudio_rdp_audio_new: a NULL peer or vcm, or bad options");
        return NULL;
    }
    deskaudio_rdp_audio *audio = calloc(1, sizeof *audio);
    if (!audio) return NULL;
    audio->peer = peer;
    audio->vcm = vcm;
    audio->codecs = options->codecs ? options->codecs : DESKAUDIO_RDP_OPUS | DESKAUDIO_RDP_PCM;
    audio->max_late_ms = options->max_late_ms ? options->max_late_ms : DEFAULT_MAX_LATE_MS;
    audio->dynamic_channel = options->dynamic_channel;
    pthread_mutex_init(&audio->out.lock, NULL);
    audio->out.client_format = -1;
    rdp_ledger_reset(&audio->out.ledger);
    audio->out.decoder = deskaudio_decoder_create();
    audio->out.reencoder = deskaudio_encoder_create();
    audio->in.name = options->microphone_name ? strdup(options->microphone_name) : NULL;
    audio->in.description = options->microphone_description ? strdup(options->microphone_description) : NULL;
    if (!audio->out.decoder || !audio->out.reencoder || (options->microphone_name && !audio->in.name) ||
        (options->microphone_description && !audio->in.description)) {
        deskaudio_rdp_audio_free(audio);
        return NULL;
    }
    (void)deskaudio_rdp_audio_check(audio);
    return audio;
}

int32_t deskaudio_rdp_audio_check(deskaudio_rdp_audio *audio)
{
    if (!audio) return DESKAUDIO_ERROR_INVALID_ARGUMENT;
    bool dynamic_ready = WTSVirtualChannelManagerIsChannelJoined(audio->vcm, DRDYNVC_SVC_CHANNEL_NAME) &&
                         WTSVirtualChannelManagerGetDrdynvcState(audio->vcm) == DRDYNVC_STATE_READY;
    bool static_joined = WTSVirtualChannelManagerIsChannelJoined(audio->vcm, RDPSND_CHANNEL_NAME);
    if (!audio->out.started && static_joined && !audio->dynamic_channel) {
        audio->out.started = true;
        (void)start_output(audio, false);
    } else if (!audio->out.started && dynamic_ready) {
        audio->out.started = true;
        (void)start_output(audio, true);
    }
    if (audio->in.name && !audio->in.opened && dynamic_ready) (void)open_input(audio);
    return DESKAUDIO_OK;
}

int32_t deskaudio_rdp_audio_get_stats(deskaudio_rdp_audio *audio, deskaudio_rdp_stats *stats, size_t stats_size)
{
    if (!audio || !stats || stats_size == 0) return DESKAUDIO_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&audio->out.lock);
    deskaudio_rdp_stats now = audio->out.stats;
    uint64_t at = now_ms();
    now.confirmations = audio->out.ledger.confirmations;
    now.blocks_in_flight = audio->out.ledger.in_flight_count;
    now.oldest_in_flight_ms = (uint32_t)rdp_ledger_oldest_ms(&audio->out.ledger, at);
    now.arrival_ms = audio->out.ledger.arrival_ms;
    now.client_render_ms = audio->out.ledger.render_delay_ms;
    pthread_mutex_unlock(&audio->out.lock);
    memcpy(stats, &now, stats_size < sizeof now ? stats_size : sizeof now);
    return DESKAUDIO_OK;
}

void deskaudio_rdp_audio_free(deskaudio_rdp_audio *audio)
{
    if (!audio) return;
    pthread_mutex_lock(&audio->out.lock);
    audio->out.closing = true;
    RdpsndServerContext *rdpsnd = audio->out.rdpsnd;
    pthread_mutex_unlock(&audio->out.lock);
    if (rdpsnd) rdpsnd_server_context_free(rdpsnd);  /* joins its thread; frees server_formats */
    close_input(&audio->in);
    deskaudio_decoder_destroy(audio->out.decoder);
    deskaudio_encoder_destroy(audio->out.reencoder);
    pthread_mutex_destroy(&audio->out.lock);
    free(audio->in.name);
    free(audio->in.description);
    free(audio);
}
