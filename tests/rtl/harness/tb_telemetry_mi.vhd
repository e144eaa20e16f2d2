-- tb_telemetry_mi.vhd: stimulus-file driven testbench for PCIE_TELEMETRY_MI
--
-- SPDX-License-Identifier: GPL-2.0-or-later
--
-- Reads per-probe stimulus files and an MI script written by run.py, drives
-- the DUT and writes the MI read results. The event log is taken by run.py
-- from a VCD of selected internal signals (GHDL --read-wave-opt). Clock convention: the rising edges of every clock are
-- at <clk>_T0 + k*<clk>_PERIOD (k integer); edge k is "cycle k" of that
-- clock. Edges of different clocks that fall on the same time are in the same
-- delta cycle, so a register sees another domain's value from before that edge.

library IEEE;
use IEEE.std_logic_1164.all;
use IEEE.numeric_std.all;
use std.textio.all;

use work.math_pack.all;
use work.type_pack.all;

entity tb is
    generic (
        PCIE_ENDPOINTS            : natural := 1;
        DMA_PORTS                 : natural := 1;
        PCIE_RQ_MFB_REGIONS       : natural := 2;
        PCIE_RC_MFB_REGIONS       : natural := 2;
        DMA_UP_MFB_REGIONS        : natural := 2;
        DMA_DOWN_MFB_REGIONS      : natural := 2;
        PCIE_RQ_MFB_REGION_BYTES  : natural := 32;
        PCIE_RC_MFB_REGION_BYTES  : natural := 32;
        DMA_UP_MFB_REGION_BYTES   : natural := 32;
        DMA_DOWN_MFB_REGION_BYTES : natural := 32;
        MFB_ITEM_BYTES            : natural := 4;
        PCIE_EOF_POS_WIDTH        : natural := 3;
        DMA_EOF_POS_WIDTH         : natural := 3;
        CNT_WIDTH                 : natural := 48;
        DRAIN_PERIOD              : natural := 4096;
        TAG_CAPACITY              : natural := 256;
        STFIFO_CAPACITY           : natural := 1024;
        DEVICE                    : string  := "NONE";
        -- clocks, all in ps
        PCIE_PERIOD_PS            : natural := 4000;
        DMA_PERIOD_PS             : natural := 5000;
        MI_PERIOD_PS              : natural := 10000;
        PCIE_T0_PS                : natural := 1000000;
        DMA_T0_PS                 : natural := 1000000;
        MI_T0_PS                  : natural := 1000000;
        -- MI_RESET is active from time 0 until this time
        MI_RESET_END_PS           : natural := 900000;
        -- directory with pcie<e>.stim, dma<e>.stim, mi.stim; outputs go there too
        DIR                       : string  := "."
    );
end entity;

architecture sim of tb is

    constant PR  : natural := max(PCIE_RQ_MFB_REGIONS,PCIE_RC_MFB_REGIONS);
    constant DR  : natural := max(DMA_UP_MFB_REGIONS,DMA_DOWN_MFB_REGIONS);
    constant EPS : natural := PCIE_ENDPOINTS;
    constant TAG_IDLE : natural := work.math_pack.min(TAG_CAPACITY,2047);

    signal mi_clk    : std_logic := '0';
    signal mi_reset  : std_logic := '1';
    -- MI_RESET = the initial reset or the one asserted by the MI script
    signal mi_reset_init : std_logic := '1';
    signal mi_reset_scr  : std_logic := '0';
    signal mi_dwr    : std_logic_vector(31 downto 0) := (others => '0');
    signal mi_addr   : std_logic_vector(31 downto 0) := (others => '0');
    signal mi_be     : std_logic_vector(3 downto 0) := (others => '1');
    signal mi_rd     : std_logic := '0';
    signal mi_wr     : std_logic := '0';
    signal mi_drd    : std_logic_vector(31 downto 0);
    signal mi_ardy   : std_logic;
    signal mi_drdy   : std_logic;

    signal pcie_clk     : std_logic_vector(EPS-1 downto 0) := (others => '0');
    signal pcie_reset   : std_logic_vector(EPS-1 downto 0) := (others => '1');
    signal pcie_sof     : slv_array_t(EPS-1 downto 0)(2*PR-1 downto 0) := (others => (others => '0'));
    signal pcie_eof     : slv_array_t(EPS-1 downto 0)(2*PR-1 downto 0) := (others => (others => '0'));
    signal pcie_eof_pos : slv_array_t(EPS-1 downto 0)(2*PR*PCIE_EOF_POS_WIDTH-1 downto 0) := (others => (others => '0'));
    signal pcie_src     : slv_array_t(EPS-1 downto 0)(1 downto 0) := (others => (others => '0'));
    signal pcie_dst     : slv_array_t(EPS-1 downto 0)(1 downto 0) := (others => (others => '0'));
    signal pcie_brake   : slv_array_t(EPS-1 downto 0)(5 downto 0) := (others => (others => '0'));
    signal pcie_stfifo  : slv_array_t(EPS-1 downto 0)(15 downto 0) := (others => std_logic_vector(to_unsigned(STFIFO_CAPACITY,16)));
    signal pcie_tag     : slv_array_t(EPS-1 downto 0)(10 downto 0) := (others => std_logic_vector(to_unsigned(TAG_IDLE,11)));
    signal pcie_mps     : slv_array_t(EPS-1 downto 0)(2 downto 0) := (others => (others => '0'));
    signal pcie_mrrs    : slv_array_t(EPS-1 downto 0)(2 downto 0) := (others => (others => '0'));
    signal pcie_ext     : std_logic_vector(EPS-1 downto 0) := (others => '0');
    signal pcie_t10     : std_logic_vector(EPS-1 downto 0) := (others => '0');
    signal pcie_rcb     : std_logic_vector(EPS-1 downto 0) := (others => '0');
    signal pcie_link    : std_logic_vector(EPS-1 downto 0) := (others => '1');

    signal dma_clk      : std_logic := '0';
    signal dma_reset    : std_logic := '1';
    -- per-endpoint reset columns; DMA_RESET follows endpoint 0's
    signal dma_rst_v    : std_logic_vector(EPS-1 downto 0) := (others => '1');
    signal dma_sof      : slv_array_t(EPS-1 downto 0)(2*DMA_PORTS*DR-1 downto 0) := (others => (others => '0'));
    signal dma_eof      : slv_array_t(EPS-1 downto 0)(2*DMA_PORTS*DR-1 downto 0) := (others => (others => '0'));
    signal dma_eof_pos  : slv_array_t(EPS-1 downto 0)(2*DMA_PORTS*DR*DMA_EOF_POS_WIDTH-1 downto 0) := (others => (others => '0'));
    signal dma_src      : slv_array_t(EPS-1 downto 0)(2*DMA_PORTS-1 downto 0) := (others => (others => '0'));
    signal dma_dst      : slv_array_t(EPS-1 downto 0)(2*DMA_PORTS-1 downto 0) := (others => (others => '0'));
    signal dma_vld      : slv_array_t(EPS-1 downto 0)(2*DMA_PORTS*DR-1 downto 0) := (others => (others => '0'));
    signal dma_msrc     : slv_array_t(EPS-1 downto 0)(2*DMA_PORTS-1 downto 0) := (others => (others => '0'));
    signal dma_mdst     : slv_array_t(EPS-1 downto 0)(2*DMA_PORTS-1 downto 0) := (others => (others => '0'));

    signal sim_done     : boolean := false;

    function edge_idx (t0, p : natural) return integer is
        variable t : integer;
    begin
        t := now / 1 ps;
        return (t - t0) / p;
    end function;

    function fname (base : string; i : natural) return string is
    begin
        return DIR & "/" & base & integer'image(i) & ".stim";
    end function;

begin

    dut : entity work.PCIE_TELEMETRY_MI
    generic map (
        PCIE_ENDPOINTS            => PCIE_ENDPOINTS,
        DMA_PORTS                 => DMA_PORTS,
        PCIE_RQ_MFB_REGIONS       => PCIE_RQ_MFB_REGIONS,
        PCIE_RC_MFB_REGIONS       => PCIE_RC_MFB_REGIONS,
        DMA_UP_MFB_REGIONS        => DMA_UP_MFB_REGIONS,
        DMA_DOWN_MFB_REGIONS      => DMA_DOWN_MFB_REGIONS,
        PCIE_RQ_MFB_REGION_BYTES  => PCIE_RQ_MFB_REGION_BYTES,
        PCIE_RC_MFB_REGION_BYTES  => PCIE_RC_MFB_REGION_BYTES,
        DMA_UP_MFB_REGION_BYTES   => DMA_UP_MFB_REGION_BYTES,
        DMA_DOWN_MFB_REGION_BYTES => DMA_DOWN_MFB_REGION_BYTES,
        MFB_ITEM_BYTES            => MFB_ITEM_BYTES,
        PCIE_EOF_POS_WIDTH        => PCIE_EOF_POS_WIDTH,
        DMA_EOF_POS_WIDTH         => DMA_EOF_POS_WIDTH,
        CNT_WIDTH                 => CNT_WIDTH,
        DRAIN_PERIOD              => DRAIN_PERIOD,
        TAG_CAPACITY              => TAG_CAPACITY,
        STFIFO_CAPACITY           => STFIFO_CAPACITY,
        DEVICE                    => DEVICE
    )
    port map (
        MI_CLK              => mi_clk,
        MI_RESET            => mi_reset,
        MI_DWR              => mi_dwr,
        MI_ADDR             => mi_addr,
        MI_BE               => mi_be,
        MI_RD               => mi_rd,
        MI_WR               => mi_wr,
        MI_DRD              => mi_drd,
        MI_ARDY             => mi_ardy,
        MI_DRDY             => mi_drdy,
        PCIE_CLK            => pcie_clk,
        PCIE_RESET          => pcie_reset,
        PCIE_MFB_SOF        => pcie_sof,
        PCIE_MFB_EOF        => pcie_eof,
        PCIE_MFB_EOF_POS    => pcie_eof_pos,
        PCIE_MFB_SRC_RDY    => pcie_src,
        PCIE_MFB_DST_RDY    => pcie_dst,
        PCIE_PTC_BRAKE      => pcie_brake,
        PCIE_STFIFO_FREE    => pcie_stfifo,
        PCIE_MPS            => pcie_mps,
        PCIE_MRRS           => pcie_mrrs,
        PCIE_EXT_TAG_EN     => pcie_ext,
        PCIE_10B_TAG_REQ_EN => pcie_t10,
        PCIE_RCB_SIZE       => pcie_rcb,
        PCIE_LINK_UP        => pcie_link,
        DMA_CLK             => dma_clk,
        DMA_RESET           => dma_reset,
        DMA_MFB_SOF         => dma_sof,
        DMA_MFB_EOF         => dma_eof,
        DMA_MFB_EOF_POS     => dma_eof_pos,
        DMA_MFB_SRC_RDY     => dma_src,
        DMA_MFB_DST_RDY     => dma_dst,
        DMA_MVB_VLD         => dma_vld,
        DMA_MVB_SRC_RDY     => dma_msrc,
        DMA_MVB_DST_RDY     => dma_mdst,
        PCIE_TAG_FREE       => pcie_tag
    );

    -- =========================================================================
    -- clocks and MI reset
    -- =========================================================================
    pcie_clk_p : process
        constant P : natural := PCIE_PERIOD_PS;
        variable first : natural;
    begin
        first := PCIE_T0_PS mod P;
        if (first < P/2 + 1) then first := first + P; end if;
        pcie_clk <= (others => '0');
        wait for (first - P/2) * 1 ps;
        loop
            exit when sim_done;
            wait for (P/2) * 1 ps;
            pcie_clk <= (others => '1');
            wait for (P - P/2) * 1 ps;
            pcie_clk <= (others => '0');
        end loop;
        wait;
    end process;

    dma_clk_p : process
        constant P : natural := DMA_PERIOD_PS;
        variable first : natural;
    begin
        first := DMA_T0_PS mod P;
        if (first < P/2 + 1) then first := first + P; end if;
        dma_clk <= '0';
        wait for (first - P/2) * 1 ps;
        loop
            exit when sim_done;
            wait for (P/2) * 1 ps;
            dma_clk <= '1';
            wait for (P - P/2) * 1 ps;
            dma_clk <= '0';
        end loop;
        wait;
    end process;

    mi_clk_p : process
        constant P : natural := MI_PERIOD_PS;
        variable first : natural;
    begin
        first := MI_T0_PS mod P;
        if (first < P/2 + 1) then first := first + P; end if;
        mi_clk <= '0';
        wait for (first - P/2) * 1 ps;
        loop
            exit when sim_done;
            wait for (P/2) * 1 ps;
            mi_clk <= '1';
            wait for (P - P/2) * 1 ps;
            mi_clk <= '0';
        end loop;
        wait;
    end process;

    dma_reset <= dma_rst_v(0);

    mi_reset_p : process
    begin
        mi_reset_init <= '1';
        wait for MI_RESET_END_PS * 1 ps;
        mi_reset_init <= '0';
        wait;
    end process;

    mi_reset <= mi_reset_init or mi_reset_scr;

    -- =========================================================================
    -- probe stimulus drivers
    -- line format (pcie): n rst sof eof pos src dst brake tags stfifo mps mrrs ext t10 rcb link
    -- line format (dma):  n rst sof eof pos src dst vld msrc mdst
    -- vectors as binary strings MSB first, the rest decimal
    -- =========================================================================
    ep_drv_g : for e in 0 to EPS-1 generate

        pcie_drv_p : process
            file f : text;
            variable l : line;
            variable n, v : integer;
            variable b1 : std_logic_vector(0 downto 0);
            variable sof, eof : std_logic_vector(2*PR-1 downto 0);
            variable pos : std_logic_vector(2*PR*PCIE_EOF_POS_WIDTH-1 downto 0);
            variable s2 : std_logic_vector(1 downto 0);
            variable br : std_logic_vector(5 downto 0);
            variable ok : boolean;
        begin
            file_open(f, fname("pcie", e), read_mode);
            loop
                wait until rising_edge(pcie_clk(e));
                exit when edge_idx(PCIE_T0_PS, PCIE_PERIOD_PS) >= -1;
            end loop;
            while not endfile(f) loop
                readline(f, l);
                read(l, n, ok);
                next when not ok;
                read(l, b1); pcie_reset(e) <= b1(0);
                read(l, sof); pcie_sof(e) <= sof;
                read(l, eof); pcie_eof(e) <= eof;
                read(l, pos); pcie_eof_pos(e) <= pos;
                read(l, s2); pcie_src(e) <= s2;
                read(l, s2); pcie_dst(e) <= s2;
                read(l, br); pcie_brake(e) <= br;
                read(l, v); pcie_tag(e) <= std_logic_vector(to_unsigned(v,11));
                read(l, v); pcie_stfifo(e) <= std_logic_vector(to_unsigned(v,16));
                read(l, v); pcie_mps(e) <= std_logic_vector(to_unsigned(v,3));
                read(l, v); pcie_mrrs(e) <= std_logic_vector(to_unsigned(v,3));
                read(l, b1); pcie_ext(e) <= b1(0);
                read(l, b1); pcie_t10(e) <= b1(0);
                read(l, b1); pcie_rcb(e) <= b1(0);
                read(l, b1); pcie_link(e) <= b1(0);
                for i in 1 to n loop
                    wait until rising_edge(pcie_clk(e));
                end loop;
            end loop;
            pcie_reset(e)   <= '0';
            pcie_sof(e)     <= (others => '0');
            pcie_eof(e)     <= (others => '0');
            pcie_eof_pos(e) <= (others => '0');
            pcie_src(e)     <= (others => '0');
            pcie_dst(e)     <= (others => '0');
            pcie_brake(e)   <= (others => '0');
            pcie_tag(e)     <= std_logic_vector(to_unsigned(TAG_IDLE,11));
            pcie_stfifo(e)  <= std_logic_vector(to_unsigned(STFIFO_CAPACITY,16));
            pcie_mps(e)     <= (others => '0');
            pcie_mrrs(e)    <= (others => '0');
            pcie_ext(e)     <= '0';
            pcie_t10(e)     <= '0';
            pcie_rcb(e)     <= '0';
            pcie_link(e)    <= '1';
            wait;
        end process;

        dma_drv_p : process
            file f : text;
            variable l : line;
            variable n : integer;
            variable b1 : std_logic_vector(0 downto 0);
            variable sof, eof, vld : std_logic_vector(2*DMA_PORTS*DR-1 downto 0);
            variable pos : std_logic_vector(2*DMA_PORTS*DR*DMA_EOF_POS_WIDTH-1 downto 0);
            variable s2 : std_logic_vector(2*DMA_PORTS-1 downto 0);
            variable ok : boolean;
        begin
            file_open(f, fname("dma", e), read_mode);
            loop
                wait until rising_edge(dma_clk);
                exit when edge_idx(DMA_T0_PS, DMA_PERIOD_PS) >= -1;
            end loop;
            while not endfile(f) loop
                readline(f, l);
                read(l, n, ok);
                next when not ok;
                read(l, b1);
                dma_rst_v(e) <= b1(0);
                read(l, sof); dma_sof(e) <= sof;
                read(l, eof); dma_eof(e) <= eof;
                read(l, pos); dma_eof_pos(e) <= pos;
                read(l, s2); dma_src(e) <= s2;
                read(l, s2); dma_dst(e) <= s2;
                read(l, vld); dma_vld(e) <= vld;
                read(l, s2); dma_msrc(e) <= s2;
                read(l, s2); dma_mdst(e) <= s2;
                for i in 1 to n loop
                    wait until rising_edge(dma_clk);
                end loop;
            end loop;
            dma_rst_v(e) <= '0';
            dma_sof(e)     <= (others => '0');
            dma_eof(e)     <= (others => '0');
            dma_eof_pos(e) <= (others => '0');
            dma_src(e)     <= (others => '0');
            dma_dst(e)     <= (others => '0');
            dma_vld(e)     <= (others => '0');
            dma_msrc(e)    <= (others => '0');
            dma_mdst(e)    <= (others => '0');
            wait;
        end process;

    end generate;

    -- =========================================================================
    -- MI script: "<m> wr <addr> <data>" | "<m> rd <addr>" | "<m> rs <n>" |
    -- "<m> end" (addr, data hex; n decimal)
    -- the access is sampled at MI edge m; reads are written to reads.txt as
    -- "<m> <addr> <data>"; "rs" drives MI_RESET = 1 so that MI edges
    -- m .. m+n-1 sample it as 1 (driven just after edge m-1, released just
    -- after edge m+n-1; run.py keeps accesses out of that time)
    -- =========================================================================
    mi_p : process
        file f   : text;
        file o   : text;
        variable l, lo : line;
        variable m, cur : integer;
        variable cmd : string(1 to 3);
        variable c : character;
        variable a, d : std_logic_vector(31 downto 0);
        variable ok, have, fin : boolean;
        variable end_m : integer := integer'high;
        type int_arr is array (0 to 15) of integer;
        variable q_m, q_a : int_arr;
        variable q_wr, q_rd : natural := 0;
        variable pending : natural := 0;
        variable next_m : integer;
        variable next_wr, next_rs : boolean;
        variable next_n : integer;
        variable rs_end : integer := integer'low;
        variable next_a, next_d : std_logic_vector(31 downto 0);
    begin
        file_open(f, DIR & "/mi.stim", read_mode);
        file_open(o, DIR & "/reads.txt", write_mode);
        have := false;
        fin  := false;
        loop
            wait until rising_edge(mi_clk);
            cur := edge_idx(MI_T0_PS, MI_PERIOD_PS);
            -- outputs of this edge (values before the edge)
            if (mi_rd = '1') then
                q_m(q_wr mod 16) := cur;
                q_a(q_wr mod 16) := to_integer(unsigned(mi_addr));
                q_wr := q_wr + 1;
            end if;
            if (mi_drdy = '1') then
                assert q_rd < q_wr report "DRDY without a read" severity failure;
                write(lo, integer'image(q_m(q_rd mod 16)) & " " &
                          to_hstring(std_logic_vector(to_unsigned(q_a(q_rd mod 16),32))) & " " &
                          to_hstring(mi_drd));
                writeline(o, lo);
                q_rd := q_rd + 1;
            end if;
            if (cur >= end_m and q_rd = q_wr and mi_rd = '0') then
                exit;
            end if;
            -- fetch the next command
            if (not have and not fin) then
                loop
                    if endfile(f) then
                        fin := true;
                        exit;
                    end if;
                    readline(f, l);
                    read(l, next_m, ok);
                    next when not ok;
                    read(l, c); -- space
                    read(l, cmd(1 to 2));
                    if (cmd(1 to 2) = "en") then
                        end_m := next_m;
                        fin := true;
                        exit;
                    end if;
                    next_wr := (cmd(1 to 2) = "wr");
                    next_rs := (cmd(1 to 2) = "rs");
                    if (next_rs) then
                        read(l, next_n);
                    else
                        hread(l, next_a);
                        if (next_wr) then
                            hread(l, next_d);
                        end if;
                    end if;
                    have := true;
                    exit;
                end loop;
            end if;
            mi_rd <= '0';
            mi_wr <= '0';
            if (cur = rs_end) then
                mi_reset_scr <= '0';
            end if;
            if (have and next_m = cur + 1 and next_rs) then
                mi_reset_scr <= '1';
                rs_end := cur + next_n;
                have := false;
            elsif (have and next_m = cur + 1) then
                mi_addr <= next_a;
                mi_be   <= "1111";
                if (next_wr) then
                    mi_wr  <= '1';
                    mi_dwr <= next_d;
                else
                    mi_rd  <= '1';
                end if;
                have := false;
            elsif (have and next_m <= cur) then
                report "MI script: access at edge " & integer'image(next_m) & " is in the past" severity failure;
            end if;
        end loop;
        file_close(o);
        sim_done <= true;
        report "simulation done at MI edge " & integer'image(cur) severity note;
        wait;
    end process;

end architecture;
