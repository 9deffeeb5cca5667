/* The RDP adapter's decisions, pure: times are passed in, nothing here reads a clock, calls
 * FreeRDP or takes a lock (rdp_sound.c owns the state and its lock). */
#ifndef DESKAUDIO_RDP_POLICY_H
#define DESKAUDIO_RDP_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The fields of a WAVEFORMATEX (FreeRDP's AUDIO_FORMAT) that choosing looks at. */
typedef struct rdp_wave_format {
    uint16_t tag;
    uint16_t channels;
    uint32_t rate;
    uint16_t bits;
} rdp_wave_format;

#define RDP_WAVE_FORMAT_PCM 0x0001
#define RDP_WAVE_FORMAT_OPUS 0x704F

/* Codecs the adapter sends in: the values of deskaudio-rdp.h's DESKAUDIO_RDP_OPUS/_PCM. */
enum { RDP_CODEC_NONE = 0, RDP_CODEC_OPUS = 1, RDP_CODEC_PCM = 2 };

/* The formats offered to a client, in order of preference: Opus 48 kHz stereo (the frames'
 * own packets), then 16-bit PCM 48 kHz stereo (decoded), those of `codecs` (RDP_CODEC_* bits). */
size_t rdp_output_formats(uint32_t codecs, rdp_wave_format out[2]);

/* Which of the client's formats the sound goes out in: the index of the first of ours the
 * client lists (its index, as Wave2 PDUs name it), its codec in `codec`; -1 if it lists none. */
int rdp_choose_output(const rdp_wave_format *client, size_t count, uint32_t codecs, int *codec);

/* The microphone's formats, offered in order: 16-bit PCM at 48 and 44.1 kHz, stereo and mono. */
size_t rdp_input_formats(rdp_wave_format out[4]);

/* The first client format that is one of ours (its index), or -1. */
int rdp_choose_input(const rdp_wave_format *client, size_t count);

/* Every audio block sent and not yet confirmed as arrived, by block number (8 bits, as the
 * Wave2 PDU's cBlockNo), and what the client's confirmations said. */
typedef struct rdp_block_ledger {
    uint64_t sent_ms[256];
    uint16_t stamp[256];
    bool in_flight[256];
    bool ever_sent[256];
    uint32_t in_flight_count;
    /* The client's last reported delay from arrival to its speakers (second confirmation), ms;
     * -1 before the first. */
    int32_t render_delay_ms;
    /* The last block's time from sending to its arrival confirmation, ms; -1 before the first. */
    int32_t arrival_ms;
    uint64_t confirmations;
    uint64_t stray_confirmations;
} rdp_block_ledger;

void rdp_ledger_reset(rdp_block_ledger *ledger);

/* Whether a block may go out at `now_ms`: not while the oldest block in flight was sent more
 * than `max_late_ms` ago (the client is that far behind, or stopped confirming), nor while
 * 255 are in flight (block numbers would repeat). */
bool rdp_ledger_may_send(const rdp_block_ledger *ledger, uint64_t now_ms, uint32_t max_late_ms);

/* Age of the oldest block in flight at `now_ms`, ms; 0 if none. */
uint64_t rdp_ledger_oldest_ms(const rdp_block_ledger *ledger, uint64_t now_ms);

/* Records block `block` sent at `now_ms`; returns the wTimeStamp it goes out with (our
 * milliseconds, low 16 bits), which the client's confirmations echo. */
uint16_t rdp_ledger_sent(rdp_block_ledger *ledger, uint8_t block, uint64_t now_ms);

/* Block `block`, recorded sent, did not go out (the send failed): not in flight, so that no
 * confirmation is awaited for it. */
void rdp_ledger_unsent(rdp_block_ledger *ledger, uint8_t block);

/* A Wave Confirm PDU for `block` with `timestamp`, at `now_ms`. FreeRDP's clients confirm
 * twice: on arrival (the timestamp echoed) and after handing it to the device (plus the time
 * taken and the device's latency); Windows clients once. Either first one ends the flight. */
void rdp_ledger_confirmed(rdp_block_ledger *ledger, uint8_t block, uint16_t timestamp, uint64_t now_ms);

#endif
