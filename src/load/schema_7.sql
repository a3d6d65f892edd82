-- Schema version 7: the ticket of a sale read by its block and index given as parameters.
--
-- In version 6 the sale's statement joined its sale to `tickets` (partitioned, a partition per
-- block loaded): the block comes from `sale_state` inside the statement, so its plan held
-- every partition, and each sale locked and opened all of them (partitions and their primary
-- keys). Measured with 100 other blocks of 2 000 tickets in the database (docs/PERFORMANCE.md,
-- "The partitions"): 1 700 sales a second at 64 clients, against 12 900 with none.
--
-- Now the sale statement returns the block and index into variables, and the ticket is read by
-- a statement planned with them as values (EXECUTE ... USING: a one-shot plan, pruned to that
-- block's partition when it is made), so a sale locks and opens one partition however many
-- blocks the database holds: 7 500 to 9 000 sales a second with the 100 other blocks, 9 300
-- to 9 900 with none. Tried and not kept: the same read as a static statement (12 900 with
-- none, 6 500 to 8 700 with 100, but after five sales the server takes a generic plan, which
-- locks every partition at each sale: a cost that grows with the blocks loaded), and that with
-- plan_cache_mode = force_custom_plan (7 000 to 7 900 with none). What a sale does, sells and
-- promises is unchanged (schema_6.sql); a sale whose ticket is missing goes on to the slow
-- path, as before.

-- The slow path (schema_6.sql), its two ticket reads as above.
CREATE OR REPLACE FUNCTION sale_next_slow(p_emission_id bigint)
RETURNS TABLE (block integer, idx integer, serial text, prize_cents bigint, layout text,
               sha256 bytea)
LANGUAGE plpgsql AS $$
DECLARE
    v_block integer;
    v_block_id bigint;
    v_idx integer;
    s record;
    v_last bigint;
    v_waits integer := 0;
BEGIN
    LOOP
        -- The sale: the next number of the block sold from and its sale, then its ticket (the
        -- same statements as sell_next_ticket's, tried again after a skip or a change of
        -- block).
        WITH n AS (
            SELECT st.block_id, st.block, nextval(st.seq)::integer AS i, st.tickets
            FROM sale_state st
            WHERE st.emission_id = p_emission_id AND st.on_sale AND st.block_id IS NOT NULL
              AND pg_catalog.current_setting('transaction_isolation') = 'read committed'
        ), sold AS (
            INSERT INTO sales (block_id, idx)
            SELECT n.block_id, n.i FROM n WHERE n.i < n.tickets
            ON CONFLICT DO NOTHING
            RETURNING sales.block_id, sales.idx
        )
        SELECT n.block, sold.block_id, sold.idx INTO v_block, v_block_id, v_idx
        FROM sold JOIN n ON true;
        IF FOUND THEN
            RETURN QUERY EXECUTE
                'SELECT $1, t.idx, t.serial, t.prize_cents, t.layout, t.sha256
                 FROM tickets t WHERE t.block_id = $2 AND t.idx = $3'
                USING v_block, v_block_id, v_idx;
            IF FOUND THEN
                RETURN;
            END IF;
        END IF;
        -- Nothing sold: the ticket was sold already (skipped: the next number), or the block's
        -- sequence has passed its end, or no block is left, or the emission is off sale.
        IF pg_catalog.current_setting('transaction_isolation') <> 'read committed' THEN
            RAISE EXCEPTION 'sell_next_ticket sells in a READ COMMITTED transaction only (this one is %)', pg_catalog.current_setting('transaction_isolation')
                USING ERRCODE = 'invalid_transaction_state',
                      HINT = 'an older snapshot would not see a withdrawal or a closing committed meanwhile: sell in READ COMMITTED, the server''s default (docs/OPERATIONS.md, "Selling")';
        END IF;
        SELECT st.on_sale, st.block_id, st.seq, st.tickets INTO s
        FROM sale_state st WHERE st.emission_id = p_emission_id;
        IF NOT FOUND OR NOT s.on_sale THEN
            RETURN;
        END IF;
        IF s.block_id IS NOT NULL THEN
            v_last := pg_catalog.pg_sequence_last_value(s.seq);
            IF v_last IS NULL OR v_last < s.tickets - 1 THEN
                CONTINUE;
            END IF;
            -- The block's sequence has passed its end: list its tickets unsold, once (the
            -- first seller to lock its sale_blocks row while it has not passed does it), and
            -- move on to the next block. The state row lock orders this with the other
            -- changes of sale_state.
            PERFORM 1 FROM sale_state st WHERE st.emission_id = p_emission_id FOR UPDATE;
            PERFORM 1 FROM sale_blocks sb WHERE sb.block_id = s.block_id AND NOT sb.passed
            FOR UPDATE;
            IF FOUND THEN
                INSERT INTO sale_returns (emission_id, block, block_id, idx)
                SELECT p_emission_id, sb.block, sb.block_id, i
                FROM sale_blocks sb, generate_series(0, sb.tickets - 1) i
                WHERE sb.block_id = s.block_id
                  AND NOT EXISTS (SELECT 1 FROM sales x
                                  WHERE x.block_id = sb.block_id AND x.idx = i)
                ON CONFLICT DO NOTHING;
                UPDATE sale_blocks sb SET passed = true WHERE sb.block_id = s.block_id;
            END IF;
            PERFORM sale_refresh(p_emission_id);
            CONTINUE;
        END IF;
        -- No block sold from: a block loaded since the last one passed its end is sold from
        -- now.
        IF EXISTS (SELECT 1 FROM sale_blocks sb
                   WHERE sb.emission_id = p_emission_id AND NOT sb.passed
                     AND NOT EXISTS (SELECT 1 FROM withdrawals w
                                     WHERE w.emission_id = p_emission_id
                                       AND w.block = sb.block)) THEN
            PERFORM 1 FROM sale_state st WHERE st.emission_id = p_emission_id FOR UPDATE;
            PERFORM sale_refresh(p_emission_id);
            CONTINUE;
        END IF;
        -- No block left: the tickets returned, in block then index order, of blocks not
        -- withdrawn. Taking one deletes it from the list; a rollback puts it back.
        WITH r AS (
            DELETE FROM sale_returns x
            WHERE (x.emission_id, x.block, x.idx) = (
                SELECT y.emission_id, y.block, y.idx FROM sale_returns y
                WHERE y.emission_id = p_emission_id
                  AND NOT EXISTS (SELECT 1 FROM withdrawals w
                                  WHERE w.emission_id = p_emission_id AND w.block = y.block)
                ORDER BY y.block, y.idx LIMIT 1
                FOR UPDATE SKIP LOCKED)
            RETURNING x.block, x.block_id, x.idx
        ), sold AS (
            INSERT INTO sales (block_id, idx)
            SELECT r.block_id, r.idx FROM r
            ON CONFLICT DO NOTHING
            RETURNING sales.block_id, sales.idx
        )
        SELECT r.block, sold.block_id, sold.idx INTO v_block, v_block_id, v_idx
        FROM sold JOIN r ON true;
        IF FOUND THEN
            RETURN QUERY EXECUTE
                'SELECT $1, t.idx, t.serial, t.prize_cents, t.layout, t.sha256
                 FROM tickets t WHERE t.block_id = $2 AND t.idx = $3'
                USING v_block, v_block_id, v_idx;
            IF FOUND THEN
                RETURN;
            END IF;
        END IF;
        -- A ticket taken from the list whose first sale had committed meanwhile: dropped, the
        -- next one. Otherwise, if a ticket of the list with no committed sale is held by a sale
        -- in flight, look again in a moment: a sleep, not a wait on a lock, since a seller here
        -- may hold entries of the list it dropped; entries whose sale has committed are not
        -- waited for (two sellers each holding one, dropped, would otherwise wait for each
        -- other forever: seen in the 64-seller test). None left: sold out.
        IF EXISTS (SELECT 1 FROM sale_returns y
                   WHERE y.emission_id = p_emission_id
                     AND NOT EXISTS (SELECT 1 FROM withdrawals w
                                     WHERE w.emission_id = p_emission_id
                                       AND w.block = y.block)
                     AND NOT EXISTS (SELECT 1 FROM sales x
                                     WHERE x.block_id = y.block_id AND x.idx = y.idx)) THEN
            v_waits := v_waits + 1;
            IF v_waits > 2000 THEN
                RAISE EXCEPTION 'every ticket left of emission % is held by sales in flight for 10 s', p_emission_id
                    USING ERRCODE = 'lock_not_available',
                          HINT = 'end this transaction and sell again; a sale in flight holds its ticket until its transaction ends';
            END IF;
            PERFORM pg_catalog.pg_sleep(0.005);
            CONTINUE;
        END IF;
        RETURN;
    END LOOP;
END
$$;

-- Sells the next ticket of an emission and returns it (no row once it is sold out, closed or
-- withdrawn, or unknown). Order and guarantees: schema_6.sql.
CREATE OR REPLACE FUNCTION sell_next_ticket(p_emission_id bigint)
RETURNS TABLE (block integer, idx integer, serial text, prize_cents bigint, layout text,
               sha256 bytea)
LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    v_block integer;
    v_block_id bigint;
    v_idx integer;
BEGIN
    -- In a statement of its own: what follows sees every withdrawal and closing committed
    -- before it.
    LOCK TABLE sales IN ROW EXCLUSIVE MODE;
    -- The sale: the next number of the block sold from and its sale; then its ticket.
    WITH n AS (
        SELECT st.block_id, st.block, nextval(st.seq)::integer AS i, st.tickets
        FROM sale_state st
        WHERE st.emission_id = p_emission_id AND st.on_sale AND st.block_id IS NOT NULL
          AND pg_catalog.current_setting('transaction_isolation') = 'read committed'
    ), sold AS (
        INSERT INTO sales (block_id, idx)
        SELECT n.block_id, n.i FROM n WHERE n.i < n.tickets
        ON CONFLICT DO NOTHING
        RETURNING sales.block_id, sales.idx
    )
    SELECT n.block, sold.block_id, sold.idx INTO v_block, v_block_id, v_idx
    FROM sold JOIN n ON true;
    IF FOUND THEN
        RETURN QUERY EXECUTE
            'SELECT $1, t.idx, t.serial, t.prize_cents, t.layout, t.sha256
             FROM tickets t WHERE t.block_id = $2 AND t.idx = $3'
            USING v_block, v_block_id, v_idx;
        IF FOUND THEN
            RETURN;
        END IF;
    END IF;
    RETURN QUERY SELECT * FROM sale_next_slow(p_emission_id);
END
$$;

-- CREATE OR REPLACE keeps the owner and the grants, not the settings: the fixed search_path
-- again (as schema_6.sql).
DO $settings$
DECLARE
    s text := current_schema();
    f text;
BEGIN
    FOREACH f IN ARRAY ARRAY['sell_next_ticket(bigint)', 'sale_next_slow(bigint)'] LOOP
        EXECUTE format('ALTER FUNCTION %I.%s SET search_path = pg_catalog, %I, pg_temp', s, f, s);
    END LOOP;
END
$settings$;
