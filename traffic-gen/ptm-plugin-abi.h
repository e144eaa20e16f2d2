/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The C ABI of external traffic plugins (telemetry-traffic-plugin).
 *
 * A plugin is a shared object that exports one function,
 *
 *   const PtmPluginApi *ptm_plugin_entry(void);
 *
 * returning a table that stays valid while the object is loaded. The
 * generator loads the object by path with GModule (dlopen with local
 * binding, so several plugins may all export the same name), checks
 * abi_version, then makes one instance per card with create() and asks it
 * for the signals of the card's probes with fill(), exactly as the core asks
 * any traffic source (PtmSourceOps in ptm-signals.h):
 *
 *  - fill() describes the cycles [start, start + n) of a probe,
 *    1 <= n <= max, in *out and returns n; out->seg points at
 *    PTM_CHUNK_SEGMENTS scratch segments, or the plugin points it at
 *    segments of its own that stay unchanged until its next call. `start`
 *    counts cycles of the probe's clock from virtual time 0. A chunk with
 *    repeat > 1 describes repeat x the cycles of its list. A chunk that
 *    breaks these rules is replaced by idle cycles (with one warning).
 *  - The signals must be a pure function of (probe, cycle) and of the
 *    arguments: the card may ask for any span, in pieces, more than once
 *    and in any order, and the instance is not saved for migration (only
 *    path and args are; the destination creates a new instance). An
 *    instance may cache whatever it derives, as long as the answers stay
 *    the same. Randomness comes from a seed in the arguments.
 *  - Calls for one instance never overlap; they come from the thread that
 *    runs the card's model.
 *
 * The structures of ptm-signals.h are part of this ABI: build a plugin
 * against the ptm-signals.h and ptm-plugin-abi.h of the QEMU that loads it.
 * PTM_PLUGIN_ABI_VERSION changes whenever any of them changes. Version 2
 * added count() and reset() at the end of the table, version 3 cost(),
 * version 4 period(), each keeping the rest, so plugins built for versions
 * 1 to 3 still load (without what came later); other versions are refused.
 *
 * A plugin needs no library: it may use GLib, but nothing of QEMU. The
 * sample in traffic-gen/plugins/ptm-sample-plugin.c shows a complete one;
 * docs/plugins.md describes the ABI for users.
 */
#ifndef PTM_PLUGIN_ABI_H
#define PTM_PLUGIN_ABI_H

#include <stdbool.h>
#include <stdint.h>

#include "ptm-signals.h"

#define PTM_PLUGIN_ABI_VERSION 4
/* The oldest version this build still loads. */
#define PTM_PLUGIN_ABI_OLDEST 1

/* The name of the exported entry function. */
#define PTM_PLUGIN_ENTRY "ptm_plugin_entry"

typedef struct PtmPluginApi {
    /* PTM_PLUGIN_ABI_VERSION; first in every version of this table */
    uint32_t abi_version;
    /* a short name for messages, e.g. "sample" */
    const char *name;
    /*
     * A new instance for a card of the given geometry, configured by
     * `args`, the free text of the object's args property ("" if unset;
     * the convention is key=value pairs separated by commas). On a refusal
     * return NULL and set *err to a message allocated with malloc() (the
     * generator frees it with free()), e.g. "load=200: at most 100".
     */
    void *(*create)(const char *args, const PtmGeometry *geo, char **err);
    /* As PtmSourceOps.fill; see above. */
    uint64_t (*fill)(void *inst, const PtmProbeInfo *probe, uint64_t start,
                     uint64_t max, PtmChunk *out);
    /*
     * Optional (NULL: the host's settings stand). As PtmSourceOps.settings:
     * at each drain of endpoint `endpoint`'s PCIe probe (PCIe cycle
     * `cycle`) *set holds what the card negotiated; change what the
     * endpoint negotiated otherwise. A pure function of its arguments.
     */
    void (*settings)(void *inst, unsigned endpoint, uint64_t cycle,
                     PtmSettings *set);
    /* Frees an instance create() made. */
    void (*destroy)(void *inst);

    /* ---- from version 2 on ---- */

    /*
     * Optional (NULL: the card counts what fill() describes). As
     * PtmSourceOps.count: add to acc and *st what counting fill()'s chunks
     * for the cycles [start, end) from state *st would, in time that does
     * not grow with the span, or return false and change nothing. Asked
     * for an empty span (st and acc NULL) it says whether it counts at
     * all; an instance that counts must then answer every span. With it
     * and cost() saying PTM_COST_RANGE the card needs no periodic work
     * while the guest leaves it alone.
     */
    bool (*count)(void *inst, const PtmProbeShape *probe, uint64_t start,
                  uint64_t end, PtmCountState *st, uint64_t *acc);
    /*
     * Optional (NULL: never). Whether the probe is held in reset over the
     * cycles [start, start + n), 1 <= n <= max: sets *held and returns n.
     * The model takes it as a pure function like fill(); this build does
     * not yet hold probes in reset (docs/plugins.md).
     */
    uint64_t (*reset)(void *inst, const PtmProbeInfo *probe, uint64_t start,
                      uint64_t max, bool *held);

    /* ---- from version 3 on ---- */

    /*
     * Optional (NULL, and for tables of versions 1 and 2: PTM_COST_WINDOW).
     * What count() costs this instance over a long span (PtmCost in
     * ptm-signals.h): PTM_COST_RANGE if it answers any span in a time that
     * does not grow with it, so that the card may leave the model idle
     * while nobody reads it; PTM_COST_WINDOW if the time grows with the
     * span (per drain window, per decision), so that the card counts in
     * the background as virtual time passes and no access waits for a
     * long backlog. Claiming PTM_COST_RANGE for a count that grows makes
     * the first access after a long idle stretch wait for all of it.
     */
    PtmCost (*cost)(void *inst);

    /* ---- from version 4 on ---- */

    /*
     * Optional (NULL, and for tables of versions 1 to 3: none). As
     * PtmSourceOps.period: a period P > 0 of the probe's traffic around
     * `cycle`, and the span [*from, *until) holding `cycle` over which
     * fill() describes cycle x + P as it describes x (no reset held in
     * it), with *id a nonzero name of that span's traffic (the same name,
     * the same traffic); *from and *until come in as 0 and UINT64_MAX. 0
     * where there is none, with *until where there may be one again. A
     * card whose accumulator loses deltas counts the drain windows of such
     * a span from one period of them; without it every window of a lossy
     * stretch is counted on its own, and a card that loses deltas all the
     * time refuses the plugin (docs/plugins.md).
     */
    uint64_t (*period)(void *inst, const PtmProbeInfo *probe, uint64_t cycle,
                       uint64_t *from, uint64_t *until, uint64_t *id);
} PtmPluginApi;

typedef const PtmPluginApi *(*PtmPluginEntry)(void);

#ifdef __cplusplus
#define PTM_PLUGIN_EXPORT extern "C" __attribute__((visibility("default")))
#else
#define PTM_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/*
 * What a plugin defines, e.g.
 *   const PtmPluginApi *ptm_plugin_entry(void) { return &my_api; }
 * The declaration keeps it exported even with -fvisibility=hidden.
 */
PTM_PLUGIN_EXPORT const PtmPluginApi *ptm_plugin_entry(void);

#endif
