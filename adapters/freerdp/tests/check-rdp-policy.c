/* The RDP adapter's decisions (rdp_policy.h), exact, on times the test gives. */
#include <stdio.h>
#include <stdlib.h>

#include "rdp_policy.h"

static int failed;
#define EXPECT(condition)                                                                 \
    do {                                                                                  \
        if (!(condition)) {                                                               \
            fprintf(stderr, "%s:%d: %s: not so: %s\n", __FILE__, __LINE__, __func__, #condition); \
            failed++;                                                                     \
        }                                                                                 \
    } while (0)

static const rdp_wave_format opus = { RDP_WAVE_FORMAT_OPUS, 2, 48000, 16 };
static const rdp_wave_format opus_mono = { RDP_WAVE_FORMAT_OPUS, 1, 48000, 16 };
static const rdp_wave_format pcm48 = { RDP_WAVE_FORMAT_PCM, 2, 48000, 16 };
static const rdp_wave_format pcm44 = { RDP_WAVE_FORMAT_PCM, 2, 44100, 16 };
static const rdp_wave_format pcm44_mono = { RDP_WAVE_FORMAT_PCM, 1, 44100, 16 };
static const rdp_wave_format pcm22_mono = { RDP_WAVE_FORMAT_PCM, 1, 22050, 16 };
static const rdp_wave_format aac = { 0x1610, 2, 44100, 16 };

static void offersOpusBeforePcmAndOnlyWhatItIsAllowed(void)
{
    rdp_wave_format out[2];
    EXPECT(rdp_output_formats(RDP_CODEC_OPUS | RDP_CODEC_PCM, out) == 2);
    EXPECT(out[0].tag == RDP_WAVE_FORMAT_OPUS && out[0].rate == 48000 && out[0].channels == 2);
    EXPECT(out[1].tag == RDP_WAVE_FORMAT_PCM && out[1].rate == 48000 && out[1].channels == 2 && out[1].bits == 16);
    EXPECT(rdp_output_formats(RDP_CODEC_PCM, out) == 1 && out[0].tag == RDP_WAVE_FORMAT_PCM);
    EXPECT(rdp_output_formats(RDP_CODEC_OPUS, out) == 1 && out[0].tag == RDP_WAVE_FORMAT_OPUS);
}

static void choosesTheClientsIndexOfTheFirstOfOurs(void)
{
    const rdp_wave_format client[] = { aac, pcm44, pcm48, opus };
    int codec = -5;
    EXPECT(rdp_choose_output(client, 4, RDP_CODEC_OPUS | RDP_CODEC_PCM, &codec) == 3 && codec == RDP_CODEC_OPUS);
    EXPECT(rdp_choose_output(client, 4, RDP_CODEC_PCM, &codec) == 2 && codec == RDP_CODEC_PCM);
    EXPECT(rdp_choose_output(client, 3, RDP_CODEC_OPUS, &codec) == -1 && codec == RDP_CODEC_NONE);
}

static void aClientWithNoneOfOursGetsNone(void)
{
    const rdp_wave_format client[] = { aac, pcm44, opus_mono };
    int codec = -5;
    EXPECT(rdp_choose_output(client, 3, RDP_CODEC_OPUS | RDP_CODEC_PCM, &codec) == -1 && codec == RDP_CODEC_NONE);
    EXPECT(rdp_choose_output(client, 0, RDP_CODEC_OPUS | RDP_CODEC_PCM, &codec) == -1);
}

static void theMicrophoneTakesPcmAt48Or44kHzPreferring48Stereo(void)
{
    const rdp_wave_format both[] = { pcm44_mono, pcm48 };
    EXPECT(rdp_choose_input(both, 2) == 1);
    const rdp_wave_format only_44_mono[] = { pcm22_mono, pcm44_mono };
    EXPECT(rdp_choose_input(only_44_mono, 2) == 1);
    const rdp_wave_format none[] = { pcm22_mono, aac, opus };
    EXPECT(rdp_choose_input(none, 3) == -1);
    rdp_wave_format ours[4];
    EXPECT(rdp_input_formats(ours) == 4 && ours[0].rate == 48000 && ours[0].channels == 2 && ours[3].rate == 44100 &&
           ours[3].channels == 1);
}

static void framesGoOutUntilTheOldestUnconfirmedBlockIsPastTheBound(void)
{
    rdp_block_ledger ledger;
    rdp_ledger_reset(&ledger);
    EXPECT(rdp_ledger_may_send(&ledger, 0, 200));
    for (int block = 0; block < 20; block++) (void)rdp_ledger_sent(&ledger, (uint8_t)block, 1000 + 10 * (uint64_t)block);
    EXPECT(ledger.in_flight_count == 20);
    EXPECT(rdp_ledger_oldest_ms(&ledger, 1200) == 200);
    EXPECT(rdp_ledger_may_send(&ledger, 1200, 200));
    EXPECT(!rdp_ledger_may_send(&ledger, 1201, 200));
    /* Block 0 arrives: the oldest in flight is block 1, sent at 1010. */
    rdp_ledger_confirmed(&ledger, 0, ledger.stamp[0], 1205);
    EXPECT(ledger.arrival_ms == 205 && ledger.in_flight_count == 19);
    EXPECT(rdp_ledger_oldest_ms(&ledger, 1205) == 195);
    EXPECT(rdp_ledger_may_send(&ledger, 1205, 200));
}

static void aClientThatStopsConfirmingGetsNothingUntilItConfirmsAgain(void)
{
    rdp_block_ledger ledger;
    rdp_ledger_reset(&ledger);
    uint64_t now = 5000;
    int sent = 0;
    for (; now < 7000; now += 10) {
        if (!rdp_ledger_may_send(&ledger, now, 200)) continue;
        (void)rdp_ledger_sent(&ledger, (uint8_t)sent, now);
        sent++;
    }
    EXPECT(sent == 21);  /* 5000 … 5200: the 21st went out with the first 200 ms old */
    for (int block = 0; block < sent; block++) rdp_ledger_confirmed(&ledger, (uint8_t)block, ledger.stamp[block], now);
    EXPECT(ledger.in_flight_count == 0 && rdp_ledger_may_send(&ledger, now, 200));
}

static void theSecondConfirmationGivesTheClientsRenderDelayAcrossTheWrap(void)
{
    rdp_block_ledger ledger;
    rdp_ledger_reset(&ledger);
    EXPECT(ledger.render_delay_ms == -1 && ledger.arrival_ms == -1);
    uint16_t stamp = rdp_ledger_sent(&ledger, 7, 65530);
    EXPECT(stamp == 65530);
    rdp_ledger_confirmed(&ledger, 7, stamp, 65533);
    EXPECT(ledger.arrival_ms == 3 && ledger.render_delay_ms == -1);
    rdp_ledger_confirmed(&ledger, 7, (uint16_t)(65530 + 87), 65620);
    EXPECT(ledger.render_delay_ms == 87);
    EXPECT(ledger.confirmations == 2 && ledger.stray_confirmations == 0);
}

static void aWindowsClientsSingleConfirmationEndsTheFlightAndGivesTheDelay(void)
{
    rdp_block_ledger ledger;
    rdp_ledger_reset(&ledger);
    uint16_t stamp = rdp_ledger_sent(&ledger, 0, 100);
    rdp_ledger_confirmed(&ledger, 0, (uint16_t)(stamp + 40), 130);
    EXPECT(ledger.in_flight_count == 0 && ledger.arrival_ms == 30 && ledger.render_delay_ms == 40);
}

static void aConfirmationOfNothingSentIsCountedAndChangesNothing(void)
{
    rdp_block_ledger ledger;
    rdp_ledger_reset(&ledger);
    rdp_ledger_confirmed(&ledger, 9, 0, 50);
    rdp_ledger_confirmed(&ledger, 10, 500, 50);
    EXPECT(ledger.stray_confirmations == 2 && ledger.in_flight_count == 0 && ledger.arrival_ms == -1 &&
           ledger.render_delay_ms == -1);
}

static void aBlockThatFailedToGoOutIsAwaitedNoLonger(void)
{
    rdp_block_ledger ledger;
    rdp_ledger_reset(&ledger);
    (void)rdp_ledger_sent(&ledger, 3, 100);
    rdp_ledger_unsent(&ledger, 3);
    EXPECT(ledger.in_flight_count == 0 && rdp_ledger_may_send(&ledger, 1000, 200));
    rdp_ledger_unsent(&ledger, 3);
    EXPECT(ledger.in_flight_count == 0);
}

static void blockNumbersNeverRepeatWhileInFlight(void)
{
    rdp_block_ledger ledger;
    rdp_ledger_reset(&ledger);
    for (int block = 0; block < 255; block++) (void)rdp_ledger_sent(&ledger, (uint8_t)block, 0);
    EXPECT(!rdp_ledger_may_send(&ledger, 0, 1000000));
    rdp_ledger_confirmed(&ledger, 0, 0, 1);
    EXPECT(rdp_ledger_may_send(&ledger, 1, 1000000));
    (void)rdp_ledger_sent(&ledger, 255, 1);
    (void)rdp_ledger_sent(&ledger, 0, 2);  /* block 0 again, after its confirmation */
    EXPECT(ledger.in_flight_count == 256 - 0 - 1 + 1);
}

int main(void)
{
    offersOpusBeforePcmAndOnlyWhatItIsAllowed();
    choosesTheClientsIndexOfTheFirstOfOurs();
    aClientWithNoneOfOursGetsNone();
    theMicrophoneTakesPcmAt48Or44kHzPreferring48Stereo();
    framesGoOutUntilTheOldestUnconfirmedBlockIsPastTheBound();
    aClientThatStopsConfirmingGetsNothingUntilItConfirmsAgain();
    theSecondConfirmationGivesTheClientsRenderDelayAcrossTheWrap();
    aWindowsClientsSingleConfirmationEndsTheFlightAndGivesTheDelay();
    aConfirmationOfNothingSentIsCountedAndChangesNothing();
    aBlockThatFailedToGoOutIsAwaitedNoLonger();
    blockNumbersNeverRepeatWhileInFlight();
    if (failed) {
        fprintf(stderr, "check-rdp-policy: %d expectation(s) failed\n", failed);
        return 1;
    }
    printf("check-rdp-policy: 11 tests passed\n");
    return 0;
}
