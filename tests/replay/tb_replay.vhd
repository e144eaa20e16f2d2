-- SPDX-License-Identifier: GPL-2.0-or-later
--
-- Traffic for the replay generator's GHDL test (tests/replay/ghdl-vcd.sh):
-- signals named like the ports of PCIE_TELEMETRY_MI, for a card with one
-- endpoint, one DMA port, 2 regions of 32 bytes on every bus and 4-byte
-- items (8 items per region, 3-bit EOF_POS fields). PCIE_CLK runs at
-- 400 MHz and DMA_CLK at 200 MHz; in 1000 ns there are 400 and 200 rising
-- edges. Each process sets its signals right after a rising edge, so the
-- next edge samples them. The counts this traffic implies are worked out in
-- tests/unit/test-replay.c (test_ghdl).
--
-- GHDL's VCD writer leaves out arrays of vectors (slv_array_t), so the
-- ports of endpoint 0 are plain vectors here, which the replay reads as
-- element 0; the DMA ones are extended identifiers such as
-- \DMA_MFB_SOF(0)\, which GHDL writes as \DMA_MFB_SOF(0)\[3:0]. The
-- instance dut carries the PCIe side once more, for the scope parameter.

library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;

entity tb_replay_dut is
    port (
        PCIE_CLK         : in std_logic_vector(0 downto 0);
        PCIE_MFB_SOF     : in std_logic_vector(3 downto 0);
        PCIE_MFB_EOF     : in std_logic_vector(3 downto 0);
        PCIE_MFB_EOF_POS : in std_logic_vector(11 downto 0);
        PCIE_MFB_SRC_RDY : in std_logic_vector(1 downto 0);
        PCIE_MFB_DST_RDY : in std_logic_vector(1 downto 0)
    );
end entity;

architecture empty of tb_replay_dut is
begin
end architecture;

library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;

entity tb_replay is
end entity;

architecture sim of tb_replay is
    -- PCIe side, endpoint 0: bus 0 (RQ) is bits 1..0, bus 1 (RC) bits 3..2;
    -- the EOF_POS field of region r of bus b is bits 3(2b+r)+2 .. 3(2b+r)
    signal PCIE_CLK         : std_logic_vector(0 downto 0) := "0";
    signal PCIE_MFB_SOF     : std_logic_vector(3 downto 0);
    signal PCIE_MFB_EOF     : std_logic_vector(3 downto 0);
    signal PCIE_MFB_EOF_POS : std_logic_vector(11 downto 0);
    signal PCIE_MFB_SRC_RDY : std_logic_vector(1 downto 0) := "00";
    signal PCIE_MFB_DST_RDY : std_logic_vector(1 downto 0);
    signal PCIE_PTC_BRAKE   : std_logic_vector(5 downto 0) := "000000";
    signal PCIE_TAG_FREE    : std_logic_vector(10 downto 0) :=
        std_logic_vector(to_unsigned(200, 11));
    signal PCIE_STFIFO_FREE : std_logic_vector(15 downto 0) :=
        std_logic_vector(to_unsigned(1024, 16));
    signal PCIE_MPS         : std_logic_vector(2 downto 0) := "001";
    signal PCIE_MRRS        : std_logic_vector(2 downto 0) := "010";
    signal PCIE_EXT_TAG_EN  : std_logic_vector(0 downto 0) := "1";
    signal PCIE_RCB_SIZE    : std_logic := '1';
    signal PCIE_LINK_UP     : std_logic := '1';

    -- DMA side, endpoint 0: bus 0 (UP) bits 1..0, bus 1 (DOWN) bits 3..2
    signal DMA_CLK                 : std_logic := '0';
    signal \DMA_MFB_SOF(0)\        : std_logic_vector(3 downto 0);
    signal \dma_mfb_eof(0)\        : std_logic_vector(3 downto 0);
    signal \Dma_Mfb_Eof_Pos(0)\    : std_logic_vector(11 downto 0);
    signal \DMA_MFB_SRC_RDY[0]\    : std_logic_vector(1 downto 0) := "00";
    signal \DMA_MFB_DST_RDY(0)\    : std_logic_vector(1 downto 0);
    signal \DMA_MVB_VLD(0)\        : std_logic_vector(3 downto 0);
    signal \DMA_MVB_SRC_RDY(0)\    : std_logic_vector(1 downto 0) := "00";
    signal \DMA_MVB_DST_RDY(0)\    : std_logic_vector(1 downto 0);
begin
    PCIE_CLK(0) <= not PCIE_CLK(0) after 1250 ps;
    DMA_CLK <= not DMA_CLK after 2500 ps;

    dut : entity work.tb_replay_dut
        port map (
            PCIE_CLK         => PCIE_CLK,
            PCIE_MFB_SOF     => PCIE_MFB_SOF,
            PCIE_MFB_EOF     => PCIE_MFB_EOF,
            PCIE_MFB_EOF_POS => PCIE_MFB_EOF_POS,
            PCIE_MFB_SRC_RDY => PCIE_MFB_SRC_RDY,
            PCIE_MFB_DST_RDY => PCIE_MFB_DST_RDY
        );

    -- RQ: five 100-byte frames (25 items: a word of 16, a word of 9 ending
    -- in region 1 at item 0), a gap of one cycle after each; the consumer
    -- holds the first word of frame 2 for one cycle.
    rq : process
        procedure tick(n : positive := 1) is
        begin
            for i in 1 to n loop
                wait until rising_edge(PCIE_CLK(0));
            end loop;
        end procedure;
    begin
        tick(20);
        for f in 0 to 4 loop
            PCIE_MFB_SRC_RDY(0) <= '1';
            PCIE_MFB_SOF(1 downto 0) <= "01";
            PCIE_MFB_EOF(1 downto 0) <= "00";
            if f = 2 then
                PCIE_MFB_DST_RDY(0) <= '0';
                tick;
            end if;
            PCIE_MFB_DST_RDY(0) <= '1';
            tick;
            PCIE_MFB_SOF(1 downto 0) <= "00";
            PCIE_MFB_EOF(1 downto 0) <= "10";
            PCIE_MFB_EOF_POS(5 downto 3) <= "000";
            tick;
            -- no word: whatever the other lines carry does not count
            PCIE_MFB_SRC_RDY(0) <= '0';
            PCIE_MFB_DST_RDY(0) <= 'X';
            PCIE_MFB_SOF(1 downto 0) <= "-Z";
            PCIE_MFB_EOF(1 downto 0) <= "XU";
            PCIE_MFB_EOF_POS(5 downto 0) <= "XXXXXX";
            tick;
        end loop;
        wait;
    end process;

    -- RC: three words of two 32-byte frames each (SOF and EOF in both
    -- regions, EOF_POS 7), then a word with an EOF and no open frame.
    rc : process
        procedure tick(n : positive := 1) is
        begin
            for i in 1 to n loop
                wait until rising_edge(PCIE_CLK(0));
            end loop;
        end procedure;
    begin
        tick(25);
        PCIE_MFB_SRC_RDY(1) <= '1';
        PCIE_MFB_DST_RDY(1) <= '1';
        PCIE_MFB_SOF(3 downto 2) <= "11";
        PCIE_MFB_EOF(3 downto 2) <= "11";
        PCIE_MFB_EOF_POS(11 downto 6) <= "111111";
        tick(3);
        PCIE_MFB_SOF(3 downto 2) <= "00";
        PCIE_MFB_EOF(3 downto 2) <= "01";
        PCIE_MFB_EOF_POS(8 downto 6) <= "011";
        tick;
        PCIE_MFB_SRC_RDY(1) <= '0';
        PCIE_MFB_DST_RDY(1) <= '0';
        wait;
    end process;

    -- BRAKE bit 0 for 10 cycles (bit 5 with it for the last 7), then bit 3
    -- for 3 cycles
    brake : process
        procedure tick(n : positive := 1) is
        begin
            for i in 1 to n loop
                wait until rising_edge(PCIE_CLK(0));
            end loop;
        end procedure;
    begin
        tick(10);
        PCIE_PTC_BRAKE <= "000001";
        tick(3);
        PCIE_PTC_BRAKE <= "100001";
        tick(7);
        PCIE_PTC_BRAKE <= "001000";
        tick(3);
        PCIE_PTC_BRAKE <= "000000";
        wait;
    end process;

    -- free tags 200 (of 256), 20 for 30 cycles, 0 for 5; free FIFO words
    -- 1024 (of 1024), 100 for 40 cycles, 300 for 25
    resources : process
        procedure tick(n : positive := 1) is
        begin
            for i in 1 to n loop
                wait until rising_edge(PCIE_CLK(0));
            end loop;
        end procedure;
    begin
        tick(50);
        PCIE_TAG_FREE <= std_logic_vector(to_unsigned(20, 11));
        tick(30);
        PCIE_TAG_FREE <= std_logic_vector(to_unsigned(0, 11));
        tick(5);
        PCIE_TAG_FREE <= std_logic_vector(to_unsigned(200, 11));
        tick(15);
        PCIE_STFIFO_FREE <= std_logic_vector(to_unsigned(100, 16));
        tick(40);
        PCIE_STFIFO_FREE <= std_logic_vector(to_unsigned(300, 16));
        tick(25);
        PCIE_STFIFO_FREE <= std_logic_vector(to_unsigned(1024, 16));
        wait;
    end process;

    -- UP: four 64-byte writes (a header on the MVB, 16 items in one word
    -- ending in region 1 at item 7), each followed by an idle cycle; then
    -- two reads, headers alone, the first held one cycle by its consumer.
    up : process
        procedure tick(n : positive := 1) is
        begin
            for i in 1 to n loop
                wait until rising_edge(DMA_CLK);
            end loop;
        end procedure;
    begin
        tick(5);
        for f in 0 to 3 loop
            \DMA_MFB_SRC_RDY[0]\(0) <= '1';
            \DMA_MFB_DST_RDY(0)\(0) <= '1';
            \DMA_MFB_SOF(0)\(1 downto 0) <= "01";
            \dma_mfb_eof(0)\(1 downto 0) <= "10";
            \Dma_Mfb_Eof_Pos(0)\(5 downto 3) <= "111";
            \DMA_MVB_VLD(0)\(1 downto 0) <= "01";
            \DMA_MVB_SRC_RDY(0)\(0) <= '1';
            \DMA_MVB_DST_RDY(0)\(0) <= '1';
            tick;
            \DMA_MFB_SRC_RDY[0]\(0) <= '0';
            \DMA_MFB_SOF(0)\(1 downto 0) <= "XX";
            \DMA_MVB_SRC_RDY(0)\(0) <= '0';
            \DMA_MVB_VLD(0)\(1 downto 0) <= "UU";
            \DMA_MVB_DST_RDY(0)\(0) <= 'X';
            tick;
        end loop;
        \DMA_MVB_VLD(0)\(1 downto 0) <= "01";
        \DMA_MVB_SRC_RDY(0)\(0) <= '1';
        \DMA_MVB_DST_RDY(0)\(0) <= '0';
        tick;
        \DMA_MVB_DST_RDY(0)\(0) <= '1';
        tick(2);
        \DMA_MVB_SRC_RDY(0)\(0) <= '0';
        wait;
    end process;

    -- DOWN: three 36-byte frames back to back (9 items: region 0 full,
    -- EOF in region 1 at item 0), the second held one cycle.
    down : process
        procedure tick(n : positive := 1) is
        begin
            for i in 1 to n loop
                wait until rising_edge(DMA_CLK);
            end loop;
        end procedure;
    begin
        tick(8);
        for f in 0 to 2 loop
            \DMA_MFB_SRC_RDY[0]\(1) <= '1';
            \DMA_MFB_SOF(0)\(3 downto 2) <= "01";
            \dma_mfb_eof(0)\(3 downto 2) <= "10";
            \Dma_Mfb_Eof_Pos(0)\(11 downto 9) <= "000";
            if f = 1 then
                \DMA_MFB_DST_RDY(0)\(1) <= '0';
                tick;
            end if;
            \DMA_MFB_DST_RDY(0)\(1) <= '1';
            tick;
        end loop;
        \DMA_MFB_SRC_RDY[0]\(1) <= '0';
        wait;
    end process;
end architecture;
