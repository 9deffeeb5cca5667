/* libFuzzer: what a client sends that the adapter decides on (its formats lists, its wave
 * confirmations, at any times) through rdp_policy.h, with the invariants checked after each
 * step. The input is a script: a formats list, then confirmations and sends. */
#include <stdlib.h>
#include <string.h>

#include "rdp_policy.h"

#define REQUIRE(condition) \
    do {                   \
        if (!(condition)) abort(); \
    } while (0)

static void check_choice(const rdp_wave_format *client, size_t count, uint32_t codecs)
{
    int codec = -1;
    int index = rdp_choose_output(client, count, codecs, &codec);
    REQUIRE(index >= -1 && index < (int)count);
    if (index >= 0) {
        REQUIRE(codec == (client[index].tag == RDP_WAVE_FORMAT_OPUS ? RDP_CODEC_OPUS : RDP_CODEC_PCM));
        REQUIRE((codecs & (uint32_t)codec) != 0);
        REQUIRE(client[index].rate == 48000 && client[index].channels == 2 && client[index].bits == 16);
    } else {
        REQUIRE(codec == RDP_CODEC_NONE);
    }
    int input = rdp_choose_input(client, count);
    REQUIRE(input >= -1 && input < (int)count);
    if (input >= 0)
        REQUIRE(client[input].tag == RDP_WAVE_FORMAT_PCM && client[input].bits == 16 &&
                (client[input].rate == 48000 || client[input].rate == 44100) &&
                (client[input].channels == 1 || client[input].channels == 2));
}

static void check_ledger(const rdp_block_ledger *ledger, uint64_t now)
{
    uint32_t in_flight = 0;
    for (int block = 0; block < 256; block++) in_flight += ledger->in_flight[block];
    REQUIRE(in_flight == ledger->in_flight_count);
    REQUIRE(ledger->render_delay_ms >= -1 && ledger->render_delay_ms <= 65535);
    if (in_flight >= 255) REQUIRE(!rdp_ledger_may_send(ledger, now, UINT32_MAX));
    if (in_flight == 0) REQUIRE(rdp_ledger_oldest_ms(ledger, now) == 0 && rdp_ledger_may_send(ledger, now, 0));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    size_t count = data[0] % 33;
    uint32_t codecs = data[1] & 3;
    data += 2;
    size -= 2;
    rdp_wave_format client[32];
    size_t listed = 0;
    for (; listed < count && size >= 8; listed++, data += 8, size -= 8) {
        static const uint16_t tags[4] = { RDP_WAVE_FORMAT_PCM, RDP_WAVE_FORMAT_OPUS, 0x0011, 0xFFFF };
        static const uint32_t rates[4] = { 48000, 44100, 22050, 0 };
        client[listed] = (rdp_wave_format){ data[0] & 4 ? (uint16_t)(data[1] | data[2] << 8) : tags[data[0] & 3],
                                            (uint16_t)(data[3] % 4), data[4] & 4 ? (uint32_t)(data[5] << 8 | data[6]) : rates[data[4] & 3],
                                            (uint16_t)(data[7] & 1 ? 16 : data[7]) };
    }
    check_choice(client, listed, codecs);

    rdp_block_ledger ledger;
    rdp_ledger_reset(&ledger);
    uint64_t now = (uint64_t)65000 * (size & 3);  /* the 16-bit stamps wrap early in some runs */
    uint8_t next_block = 0;
    for (; size >= 4; data += 4, size -= 4) {
        now += data[3];
        switch (data[0] % 3) {
        case 0:
            if (rdp_ledger_may_send(&ledger, now, (uint32_t)data[1] * 4)) (void)rdp_ledger_sent(&ledger, next_block++, now);
            break;
        case 1:  /* a confirmation the client sends: any block, any timestamp */
            rdp_ledger_confirmed(&ledger, data[1], (uint16_t)(data[2] | data[3] << 8), now);
            break;
        default:  /* the arrival of a block in flight, echoed as sent */
            rdp_ledger_confirmed(&ledger, data[1], ledger.stamp[data[1]], now);
            break;
        }
        check_ledger(&ledger, now);
    }
    return 0;
}
