#include "rdp_policy.h"

#include <string.h>

static const rdp_wave_format opus_48k = { RDP_WAVE_FORMAT_OPUS, 2, 48000, 16 };
static const rdp_wave_format pcm_48k = { RDP_WAVE_FORMAT_PCM, 2, 48000, 16 };

static bool same_format(const rdp_wave_format *a, const rdp_wave_format *b)
{
    return a->tag == b->tag && a->channels == b->channels && a->rate == b->rate && a->bits == b->bits;
}

size_t rdp_output_formats(uint32_t codecs, rdp_wave_format out[2])
{
    size_t count = 0;
    if (codecs & RDP_CODEC_OPUS) out[count++] = opus_48k;
    if (codecs & RDP_CODEC_PCM) out[count++] = pcm_48k;
    return count;
}

int rdp_choose_output(const rdp_wave_format *client, size_t count, uint32_t codecs, int *codec)
{
    rdp_wave_format ours[2];
    size_t offered = rdp_output_formats(codecs, ours);
    for (size_t i = 0; i < offered; i++) {
        for (size_t j = 0; j < count && j < 0xFFFF; j++) {
            if (same_format(&ours[i], &client[j])) {
                *codec = ours[i].tag == RDP_WAVE_FORMAT_OPUS ? RDP_CODEC_OPUS : RDP_CODEC_PCM;
                return (int)j;
            }
        }
    }
    *codec = RDP_CODEC_NONE;
    return -1;
}

size_t rdp_input_formats(rdp_wave_format out[4])
{
    const uint32_t rates[2] = { 48000, 44100 };
    size_t count = 0;
    for (int r = 0; r < 2; r++)
        for (uint16_t channels = 2; channels >= 1; channels--)
            out[count++] = (rdp_wave_format){ RDP_WAVE_FORMAT_PCM, channels, rates[r], 16 };
    return count;
}

int rdp_choose_input(const rdp_wave_format *client, size_t count)
{
    rdp_wave_format ours[4];
    size_t offered = rdp_input_formats(ours);
    for (size_t i = 0; i < offered; i++)
        for (size_t j = 0; j < count && j < 0xFFFF; j++)
            if (same_format(&ours[i], &client[j])) return (int)j;
    return -1;
}

void rdp_ledger_reset(rdp_block_ledger *ledger)
{
    memset(ledger, 0, sizeof *ledger);
    ledger->render_delay_ms = -1;
    ledger->arrival_ms = -1;
}

uint64_t rdp_ledger_oldest_ms(const rdp_block_ledger *ledger, uint64_t now_ms)
{
    uint64_t oldest = 0;
    if (ledger->in_flight_count == 0) return 0;
    for (int block = 0; block < 256; block++) {
        if (ledger->in_flight[block] && now_ms > ledger->sent_ms[block] && now_ms - ledger->sent_ms[block] > oldest)
            oldest = now_ms - ledger->sent_ms[block];
    }
    return oldest;
}

bool rdp_ledger_may_send(const rdp_block_ledger *ledger, uint64_t now_ms, uint32_t max_late_ms)
{
    if (ledger->in_flight_count >= 255) return false;
    return rdp_ledger_oldest_ms(ledger, now_ms) <= max_late_ms;
}

uint16_t rdp_ledger_sent(rdp_block_ledger *ledger, uint8_t block, uint64_t now_ms)
{
    if (!ledger->in_flight[block]) ledger->in_flight_count++;
    ledger->in_flight[block] = true;
    ledger->ever_sent[block] = true;
    ledger->sent_ms[block] = now_ms;
    ledger->stamp[block] = (uint16_t)now_ms;
    return ledger->stamp[block];
}

void rdp_ledger_unsent(rdp_block_ledger *ledger, uint8_t block)
{
    if (ledger->in_flight[block]) ledger->in_flight_count--;
    ledger->in_flight[block] = false;
}

void rdp_ledger_confirmed(rdp_block_ledger *ledger, uint8_t block, uint16_t timestamp, uint64_t now_ms)
{
    ledger->confirmations++;
    uint16_t stamp = ledger->stamp[block];
    if (ledger->in_flight[block]) {
        ledger->in_flight[block] = false;
        ledger->in_flight_count--;
        ledger->arrival_ms = (int32_t)(now_ms - ledger->sent_ms[block]);
    } else if (timestamp == stamp || !ledger->ever_sent[block]) {
        ledger->stray_confirmations++;  /* an arrival confirmed twice, or a block never sent */
        return;
    }
    if (timestamp != stamp) ledger->render_delay_ms = (uint16_t)(timestamp - stamp);
}
