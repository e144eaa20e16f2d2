/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The text-trace reader of the replay generator (traffic-gen/ptm-replay.c and ptm-trace.c,
 * docs/replay.md), through ptm_replay_load() as QEMU reaches it, on two
 * cards; a trace that loads is played (fuzz-replay.h). Inputs that the
 * loader would read as a VCD are fuzz-vcd's and skipped here.
 */
#include "fuzz-replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FzCard *cards;
    char *path;

    if (fz_is_vcd(data, size)) {
        return 0;
    }
    cards = fz_cards();
    path = fz_write(data, size, ".txt");
    fz_load(&cards[1], path, "", 1);
    if (fz_load(&cards[0], path, "", 2)) {
        fz_gone(&cards[0], path, "");
    }
    g_unlink(path);
    g_free(path);
    return 0;
}
