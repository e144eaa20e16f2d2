/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A PCIe 6 link in flit mode at 64.0 GT/s, in closed form: how many flits
 * cross it in a stretch of L0, how many flits a number of TLP bytes
 * fills, and how long a flit waits for its Ack, Nak or replay. Plain C,
 * no QEMU headers. docs/flit.md gives the figures and their sources.
 */
#ifndef FLIT_LINK_H
#define FLIT_LINK_H

#include <stdbool.h>
#include <stdint.h>

#define FLIT_BYTES          256u    /* 236 TLP + 6 DLP + 8 CRC + 6 ECC */
#define FLIT_TLP_BYTES      236u
#define FLIT_SKP_SYMBOLS    40u     /* a SKP ordered set, per lane */
/* 64.0 GT/s, 1b/1b: a symbol (8 UI) a lane every 1/8 ns */
#define FLIT_SYMBOLS_PER_NS 8u

/* Flit mode exists at x1, x2, x4, x8 and x16 */
bool flit_width_valid(unsigned width);

/* Flits between two SKP ordered sets at 64.0 GT/s, common clock */
unsigned flit_skp_interval(unsigned width);

/* A flit's time on the wire in picoseconds: 2048 / (width x 64) ns */
uint32_t flit_time_ps(unsigned width);

/*
 * Flit slots (payload, NOP or IDLE flits alike) in l0_ns of L0 from L0
 * entry: K flits, then a SKP ordered set, and again.
 */
uint64_t flit_slots(unsigned width, uint64_t l0_ns);

/* Flits that bytes of TLPs fill, 236 a flit */
uint64_t flit_payload_flits(uint64_t bytes);

/* The spec's recommended Ack/Nak turnaround for the width, ns */
uint32_t flit_ack_turnaround_ns(unsigned width);

/*
 * The link model's latencies in ns, flight_ns the one-way time on the
 * wire: a flit's Ack or Nak arrives a flit time, a flight, the far
 * end's turnaround and a flight back after its first bit left; a replay
 * after a Nak one flit time later still (the flit in progress ends).
 */
uint64_t flit_ack_latency_ns(unsigned width, uint32_t flight_ns);
uint64_t flit_replay_latency_ns(unsigned width, uint32_t flight_ns);

/* The Link Width code of Flit Logging's registers: x1 0 ... x16 4 */
unsigned flit_width_code(unsigned width);

#endif
