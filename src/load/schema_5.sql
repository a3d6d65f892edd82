-- emission-factory: schema version 5. The sale path at peak: two statements per sale instead
-- of eight, no tuple lock taken by the immutability triggers, more lanes, and no sort or
-- convoy when a connection's own lane is held or sold out.
--
-- Measured under version 4 (benches/sales.sh, docs/PERFORMANCE.md): a sale cost the server
-- about ten times the CPU of a one-row INSERT, so that at 16 and 64 clients on two cores it
-- sold a quarter of the INSERTs' rate. perf and pg_stat_statements showed where: eight
-- statements per sale, each with its executor started (its CHECK constraints and trigger
-- conditions parsed again from their stored text), and a BEFORE ROW trigger on tickets, which
-- makes PostgreSQL lock the row before it updates it (one more WAL record and page write per
-- sale).
--
-- Immutability. The two triggers of version 3 that refuse changes to a ticket row and to a
-- sale cursor are now AFTER ROW triggers with the same conditions: an AFTER trigger's WHEN is
-- evaluated on the old and new rows as the row is updated, and raising the error aborts the
-- statement, which undoes the change, so they refuse exactly what they refused; but an
-- AFTER trigger needs no lock on the row beforehand. The DELETE triggers stay as they were.
--
-- Lanes. Version 3 split a block into 64 lanes: at 64 clients, connections whose
-- pg_backend_pid() mod 64 fell on the same lane, and those whose lane was sold out, took the
-- free lane with the lowest next ticket (a sort of every cursor of the block at each sale), and
-- once every lane left was held they all waited on the same one (pg_stat_statements: 1 % of the
-- sales waited, 10 ms each, a fifth of the sale path's time). Blocks loaded from version 5 have
-- 256 lanes (SALE_LANES in src/load/mod.rs; fewer for a block of fewer tickets); blocks loaded
-- before keep theirs.
--
-- Order (replacing version 3's): the emission's blocks in block order. In a block, a
-- connection sells from its own lane, lane (pg_backend_pid() mod lanes), in index order while
-- that lane has tickets and no other sale in flight holds it; otherwise from the next lane
-- after its own, in lane order, that has tickets and that no sale in flight holds, and if there
-- is none, from the first such lane from lane 0. When every lane left in a block is held by
-- sales in flight, the seller takes the next block's; when every lane left in the emission is
-- held, it waits for one (as version 3). Each search is by the primary key and stops at the
-- first lane found.
--
-- The sale function keeps version 4's guarantees (schema_3.sql, schema_4.sql): every ticket
-- sold exactly once, none skipped (a rolled-back sale rolls its lane's cursor back with it),
-- durable as the seller's transaction, nothing sold from a closed or withdrawn emission or a
-- withdrawn block. A sale is two statements when its own lane is free:
--   1. one statement locks the connection's own lane of the first block of the emission, in
--      block order, that has a lane left and is not withdrawn (FOR UPDATE SKIP LOCKED), if
--      that lane has tickets left and no sale in flight holds it; when it finds none (the lane
--      is held or sold out, or the emission is closed or withdrawn), the search above runs;
--   2. one statement, after the lock (so with a snapshot that sees any withdrawal or closing
--      committed before the lock was taken), checks the emission is neither closed nor
--      withdrawn nor its block withdrawn, moves the lane's cursor on and marks the ticket sold,
--      all or nothing. The cursor moves only if the check passes; the ticket is marked only if
--      the cursor moved.

SET LOCAL ROLE ef_loader;

DROP TRIGGER tickets_immutable ON tickets;
CREATE TRIGGER tickets_immutable
AFTER UPDATE ON tickets FOR EACH ROW
WHEN (OLD.sold_at IS NOT NULL OR NEW.sold_at IS NULL
      OR NEW.block_id <> OLD.block_id OR NEW.idx <> OLD.idx OR NEW.serial <> OLD.serial
      OR NEW.prize_cents <> OLD.prize_cents OR NEW.layout <> OLD.layout
      OR NEW.sha256 <> OLD.sha256)
EXECUTE FUNCTION refuse_ticket_change();

DROP TRIGGER sale_cursors_forward_only ON sale_cursors;
CREATE TRIGGER sale_cursors_forward_only
AFTER UPDATE ON sale_cursors FOR EACH ROW
WHEN (NEW.next_idx <> OLD.next_idx + OLD.lanes OR NEW.block_id <> OLD.block_id
      OR NEW.lane <> OLD.lane OR NEW.lanes <> OLD.lanes OR NEW.tickets <> OLD.tickets)
EXECUTE FUNCTION refuse_cursor_change();

-- Sells the next ticket of an emission and returns it (no row once it is sold out, closed or
-- withdrawn). The order and the guarantees are those of versions 3 and 4 (above, and
-- schema_3.sql): every ticket sold exactly once, none skipped (a rolled-back sale rolls its
-- lane's cursor back with it), durable as the seller's transaction.
CREATE OR REPLACE FUNCTION sell_next_ticket(p_emission_id bigint)
RETURNS TABLE (block integer, idx integer, serial text, prize_cents bigint, layout text,
               sha256 bytea)
LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    v_block_id bigint;
    v_block integer;
    v_lane integer;
    v_lanes integer;
    v_next integer;
    v_open boolean;
    deadlocks integer := 0;
BEGIN
    LOOP
        -- 1. The connection's own lane of the first block with a lane left.
        SELECT s.block_id, f.block, s.lane, s.lanes, s.next_idx
        INTO v_block_id, v_block, v_lane, v_lanes, v_next
        FROM (SELECT bl.block_id, bl.block,
                     (SELECT z.lanes FROM sale_cursors z
                      WHERE z.block_id = bl.block_id AND z.lane = 0) AS lanes
              FROM blocks bl
              WHERE bl.emission_id = p_emission_id
                -- A lane left, by the primary key from lane 0 (a subquery, not a join, so
                -- that the search stops at the first open lane of the block).
                AND (SELECT o.lane FROM sale_cursors o
                     WHERE o.block_id = bl.block_id AND o.next_idx < o.tickets
                     ORDER BY o.lane LIMIT 1) IS NOT NULL
                AND NOT EXISTS (SELECT 1 FROM withdrawals w
                                WHERE w.emission_id = p_emission_id
                                  AND (w.block IS NULL OR w.block = bl.block))
                AND NOT EXISTS (SELECT 1 FROM closings c WHERE c.emission_id = p_emission_id)
              ORDER BY bl.block
              LIMIT 1) f
        JOIN sale_cursors s
          ON s.block_id = f.block_id AND s.lane = pg_backend_pid() % f.lanes
        WHERE s.next_idx < s.tickets
        FOR UPDATE OF s SKIP LOCKED;
        IF NOT FOUND THEN
            -- The search: closed or withdrawn, the block's other free lanes, the next blocks',
            -- or a wait.
            IF EXISTS (SELECT 1 FROM closings c WHERE c.emission_id = p_emission_id)
               OR EXISTS (SELECT 1 FROM withdrawals w
                          WHERE w.emission_id = p_emission_id AND w.block IS NULL) THEN
                RETURN;
            END IF;
            v_lane := NULL;
            v_open := false;
            FOR v_block_id, v_block IN
                SELECT bl.block_id, bl.block FROM blocks bl
                WHERE bl.emission_id = p_emission_id
                  AND NOT EXISTS (SELECT 1 FROM withdrawals w
                                  WHERE w.emission_id = p_emission_id AND w.block = bl.block)
                ORDER BY bl.block
            LOOP
                SELECT s.lane, s.lanes, s.next_idx INTO v_lane, v_lanes, v_next
                FROM sale_cursors s
                WHERE s.block_id = v_block_id
                  AND s.lane = pg_backend_pid() % (SELECT f.lanes FROM sale_cursors f
                                                   WHERE f.block_id = v_block_id AND f.lane = 0)
                  AND s.next_idx < s.tickets
                FOR UPDATE SKIP LOCKED;
                EXIT WHEN FOUND;
                -- The block's next free lane with tickets after its own, in lane order, then
                -- from lane 0 (each search by the primary key, stopping at the first found).
                SELECT s.lane, s.lanes, s.next_idx INTO v_lane, v_lanes, v_next
                FROM sale_cursors s
                WHERE s.block_id = v_block_id AND s.next_idx < s.tickets
                  AND s.lane > pg_backend_pid() % s.lanes
                ORDER BY s.lane
                LIMIT 1
                FOR UPDATE SKIP LOCKED;
                EXIT WHEN FOUND;
                SELECT s.lane, s.lanes, s.next_idx INTO v_lane, v_lanes, v_next
                FROM sale_cursors s
                WHERE s.block_id = v_block_id AND s.next_idx < s.tickets
                  AND s.lane < pg_backend_pid() % s.lanes
                ORDER BY s.lane
                LIMIT 1
                FOR UPDATE SKIP LOCKED;
                EXIT WHEN FOUND;
                v_open := v_open OR EXISTS (SELECT 1 FROM sale_cursors s
                                            WHERE s.block_id = v_block_id
                                              AND s.next_idx < s.tickets);
            END LOOP;
            IF v_lane IS NULL THEN
                IF NOT v_open THEN
                    RETURN;
                END IF;
                -- Every lane left is held by a sale in flight (or by a withdrawal or closing
                -- being applied): wait for the first of them to end, then look again. The wait
                -- is in a subtransaction rolled back at once, so that the waiting seller holds
                -- no lock while it waits (schema_3.sql).
                BEGIN
                    PERFORM 1 FROM sale_cursors s JOIN blocks bl ON bl.block_id = s.block_id
                    WHERE bl.emission_id = p_emission_id AND s.next_idx < s.tickets
                      AND NOT EXISTS (SELECT 1 FROM withdrawals w
                                      WHERE w.emission_id = p_emission_id AND w.block = bl.block)
                    ORDER BY bl.block, s.next_idx
                    LIMIT 1
                    FOR UPDATE OF s;
                    RAISE EXCEPTION USING ERRCODE = 'EF001';
                EXCEPTION
                    WHEN SQLSTATE 'EF001' THEN NULL;
                    WHEN deadlock_detected THEN
                        deadlocks := deadlocks + 1;
                        IF deadlocks > 3 THEN
                            RAISE;
                        END IF;
                END;
                CONTINUE;
            END IF;
        END IF;
        -- 2. The lane is locked: a withdrawal or closing that committed before is seen now (one
        -- that comes after waits for this sale's transaction to end). The check, the cursor's
        -- move and the ticket's sale are one statement: the cursor moves only if the check
        -- passes, the ticket is marked only if the cursor moved.
        RETURN QUERY
        WITH on_sale AS (
            SELECT NOT EXISTS (SELECT 1 FROM closings c WHERE c.emission_id = p_emission_id)
               AND NOT EXISTS (SELECT 1 FROM withdrawals w
                               WHERE w.emission_id = p_emission_id
                                 AND (w.block IS NULL OR w.block = v_block)) AS yes
        ), moved AS (
            UPDATE sale_cursors s SET next_idx = v_next + v_lanes
            WHERE s.block_id = v_block_id AND s.lane = v_lane
              AND (SELECT o.yes FROM on_sale o)
            RETURNING s.lane
        )
        UPDATE tickets t SET sold_at = clock_timestamp()
        WHERE t.block_id = v_block_id AND t.idx = v_next AND t.sold_at IS NULL
          AND EXISTS (SELECT 1 FROM moved)
        RETURNING v_block, t.idx, t.serial, t.prize_cents, t.layout, t.sha256;
        IF FOUND THEN
            RETURN;
        END IF;
        -- Nothing sold: the emission or the block was stopped meanwhile (the next round's
        -- search sees it and returns no row or sells from another block), or the ticket was
        -- sold already, by version 1 out of order (the cursor moved past it: on to the next).
    END LOOP;
END
$$;

DO $grants$
DECLARE
    s text := current_schema();
BEGIN
    EXECUTE format('ALTER FUNCTION %I.sell_next_ticket(bigint) SET search_path = pg_catalog, %I, pg_temp', s, s);
END
$grants$;
