-- The sale-path prototypes measured on 2026-12-03 (docs/PERFORMANCE.md, "The sale path",
-- "Variants tried under version 5"). NOT a migration and NOT safe: most of them drop
-- guarantees of schema_5.sql (the closing and withdrawal check, the search of the other lanes
-- and blocks, the immutability of a sale cursor) to measure what a sale costs without them.
-- Run as the superuser in the database of one block loaded as benches/sales.sh loads it
-- (block_id 1, 256 lanes), and call them as `SELECT * FROM fN(1)` with pgbench beside the
-- durable INSERT of benches/sales.sh.
--
-- Layouts. "interleaved" is version 5's (lane l holds l, l + 256, ...). "contiguous" (lead 3)
-- gives lane l the indices [l * n / 256, (l + 1) * n / 256); for the prototype the column
-- `tickets` of a cursor holds the lane's end, the check next_idx % lanes is dropped, and
-- schema_5.sql is applied with `v_next + v_lanes` and `OLD.next_idx + OLD.lanes` replaced by
-- `v_next + 1` and `OLD.next_idx + 1`:
--
--   SET session_replication_role = replica;
--   UPDATE tickets SET sold_at = NULL WHERE sold_at IS NOT NULL;
--   ALTER TABLE sale_cursors DROP CONSTRAINT sale_cursors_check1;
--   UPDATE sale_cursors s SET next_idx = (s.lane::bigint * b.tickets / s.lanes),
--          tickets = ((s.lane + 1)::bigint * b.tickets / s.lanes)
--   FROM blocks b WHERE b.block_id = s.block_id;
--   RESET session_replication_role;
--   VACUUM FULL sale_cursors; VACUUM ANALYZE tickets; CHECKPOINT;
--
-- The functions below assume the contiguous layout (the cursor moves by 1).

-- f1: the whole sale as one statement (cursor move and ticket mark), own lane only, block 1
-- by constant, no closing or withdrawal check, no search.
CREATE OR REPLACE FUNCTION f1(p bigint)
RETURNS TABLE (idx integer, serial text, prize_cents bigint, layout text, sha256 bytea)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
BEGIN
    RETURN QUERY
    WITH m AS (UPDATE sale_cursors s SET next_idx = s.next_idx + 1
               WHERE s.block_id = 1 AND s.lane = pg_backend_pid() % 256
                 AND s.next_idx < s.tickets
               RETURNING s.next_idx - 1 AS i)
    UPDATE tickets_1 t SET sold_at = clock_timestamp() FROM m
    WHERE t.block_id = 1 AND t.idx = m.i
    RETURNING t.idx, t.serial, t.prize_cents, t.layout, t.sha256;
END
$$;

-- f1p: f1 through the partitioned parent (lead 2: the partition named or not).
CREATE OR REPLACE FUNCTION f1p(p bigint)
RETURNS TABLE (idx integer, serial text, prize_cents bigint, layout text, sha256 bytea)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
BEGIN
    RETURN QUERY
    WITH m AS (UPDATE sale_cursors s SET next_idx = s.next_idx + 1
               WHERE s.block_id = 1 AND s.lane = pg_backend_pid() % 256
                 AND s.next_idx < s.tickets
               RETURNING s.next_idx - 1 AS i)
    UPDATE tickets t SET sold_at = clock_timestamp() FROM m
    WHERE t.block_id = 1 AND t.idx = m.i
    RETURNING t.idx, t.serial, t.prize_cents, t.layout, t.sha256;
END
$$;

-- f3: version 5's two statements reduced to their core: lock the own lane by the primary
-- key (block 1 by constant), then move it and mark the ticket (no check, no search).
CREATE OR REPLACE FUNCTION f3(p bigint)
RETURNS TABLE (idx integer, serial text, prize_cents bigint, layout text, sha256 bytea)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    v_next integer;
    v_block_id bigint;
    v_lane integer;
BEGIN
    SELECT s.next_idx, s.block_id, s.lane INTO v_next, v_block_id, v_lane
    FROM sale_cursors s
    WHERE s.block_id = 1 AND s.lane = pg_backend_pid() % 256 AND s.next_idx < s.tickets
    FOR UPDATE SKIP LOCKED;
    RETURN QUERY
    WITH m AS (UPDATE sale_cursors s SET next_idx = v_next + 1
               WHERE s.block_id = v_block_id AND s.lane = v_lane RETURNING 1)
    UPDATE tickets t SET sold_at = clock_timestamp()
    WHERE t.block_id = v_block_id AND t.idx = v_next AND t.sold_at IS NULL
      AND EXISTS (SELECT 1 FROM m)
    RETURNING t.idx, t.serial, t.prize_cents, t.layout, t.sha256;
END
$$;

-- g1: the floor of any cursor design: the cursor moves, the ticket is only read (no ticket
-- row written at all; the sale would be recorded by the cursor alone).
CREATE OR REPLACE FUNCTION g1(p bigint)
RETURNS TABLE (idx integer, serial text, prize_cents bigint, layout text, sha256 bytea)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
BEGIN
    RETURN QUERY
    WITH m AS (UPDATE sale_cursors s SET next_idx = s.next_idx + 1
               WHERE s.block_id = 1 AND s.lane = pg_backend_pid() % 256
                 AND s.next_idx < s.tickets
               RETURNING s.next_idx - 1 AS i)
    SELECT t.idx, t.serial, t.prize_cents, t.layout, t.sha256
    FROM tickets t JOIN m ON t.block_id = 1 AND t.idx = m.i;
END
$$;

-- g2: append-only (lead 4): the cursor moves, one row INSERTed into an unindexed table of
-- sales with no trigger and no constraint, the ticket only read.
CREATE TABLE IF NOT EXISTS sales_x (
    block_id bigint NOT NULL,
    idx      integer NOT NULL,
    sold_at  timestamptz NOT NULL
);
CREATE OR REPLACE FUNCTION g2(p bigint)
RETURNS TABLE (idx integer, serial text, prize_cents bigint, layout text, sha256 bytea)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
BEGIN
    RETURN QUERY
    WITH m AS (UPDATE sale_cursors s SET next_idx = s.next_idx + 1
               WHERE s.block_id = 1 AND s.lane = pg_backend_pid() % 256
                 AND s.next_idx < s.tickets
               RETURNING s.next_idx - 1 AS i),
    ins AS (INSERT INTO sales_x SELECT 1, m.i, clock_timestamp() FROM m RETURNING sales_x.idx)
    SELECT t.idx, t.serial, t.prize_cents, t.layout, t.sha256
    FROM tickets t JOIN ins ON t.block_id = 1 AND t.idx = ins.idx;
END
$$;

-- b and c (not repeated here): version 5's function (contiguous) with one of its two
-- statements reduced. b: the second statement without the closing and withdrawal check
-- (the cursor's UPDATE and the ticket's, as one statement). c: the first statement replaced
-- by f3's lock of the own lane of block 1 by the primary key (the search kept as fallback).

-- g1p: g1 on a copy of the cursors with no trigger, no CHECK constraint and no foreign key
-- (what the cursor's guards cost).
CREATE TABLE IF NOT EXISTS cur_plain AS
SELECT block_id, lane, lanes, tickets, next_idx FROM sale_cursors;
ALTER TABLE cur_plain DROP CONSTRAINT IF EXISTS cur_plain_pkey;
ALTER TABLE cur_plain ADD PRIMARY KEY (block_id, lane);
CREATE OR REPLACE FUNCTION g1p(p bigint)
RETURNS TABLE (idx integer, serial text, prize_cents bigint, layout text, sha256 bytea)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
BEGIN
    RETURN QUERY
    WITH m AS (UPDATE cur_plain s SET next_idx = s.next_idx + 1
               WHERE s.block_id = 1 AND s.lane = pg_backend_pid() % 256
                 AND s.next_idx < s.tickets
               RETURNING s.next_idx - 1 AS i)
    SELECT t.idx, t.serial, t.prize_cents, t.layout, t.sha256
    FROM tickets t JOIN m ON t.block_id = 1 AND t.idx = m.i;
END
$$;
