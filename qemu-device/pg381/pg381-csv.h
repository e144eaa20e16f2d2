/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * PG381's CSV traffic profile (AXI4) read into the card's program
 * (docs/pg381.md): a header line of the 24 columns of PG381's
 * default_aximm_synth_tg.csv, then one command a line (WRITE, READ, WAIT,
 * START_LOOP, END_LOOP, PHASE_DONE); '#' starts a comment line.
 */
#ifndef PG381_CSV_H
#define PG381_CSV_H

#include <stddef.h>

#include "pg381-core.h"

#define PG381_CSV_COLUMNS       24u

/* The column names, 1-based (column 0 is ""); alternatives after '|' */
extern const char *const pg381_csv_columns[PG381_CSV_COLUMNS + 1];

/*
 * The lines of generator `tg` (TG_NUM tg or empty) as instructions into
 * prog (room for PG381_INSTRS), *n of them, the last with LAST. NULL, or
 * why not (g_malloc'd), starting "line L, column C (name): ".
 */
char *pg381_csv_parse(const char *text, size_t len, unsigned tg,
                      Pg381Instr *prog, unsigned *n);

#endif
