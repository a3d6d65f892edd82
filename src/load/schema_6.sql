-- emission-factory: schema version 6. A sale is an INSERT into an append-only table of sales,
-- its ticket numbered by a sequence per block, instead of the UPDATE of a lane's cursor and of
-- the ticket row.
--
-- Measured under version 5 (benches/sales.sh, docs/PERFORMANCE.md "The sale path"): at 64
-- clients a sale sold at 0.16 to 0.30 times the rate of the same database's durable one-row
-- INSERT, and the cursor's UPDATE alone, with every check dropped, at 0.39 to 0.49: a design
-- that updates a row per sale cannot reach half the INSERT's rate on two cores. A sale of this
-- version is one INSERT (the sale), one sequence number and one read of the ticket by its
-- primary key.
--
-- Tables.
--   sales         one row per ticket sold: (block_id, idx) and sold_at. The primary key is what
--                 makes a ticket sold at most once. Never updated or deleted (triggers).
--   sale_blocks   per block: its tickets, its sequence (the next index to sell) and whether
--                 the sequence has passed the block's last ticket.
--   sale_state    per emission: the block sold from now (the lowest-numbered block, not
--                 withdrawn, whose sequence has not passed its end; NULL when there is none),
--                 and whether the emission is on sale (not closed, not withdrawn).
--   sale_returns  the tickets of a block whose sequence has passed its end and that were not
--                 sold then: a sale rolled back (its sequence number is not), or a number a
--                 server crash skipped (sequences are logged 32 numbers ahead). They are sold
--                 once every block's sequence has passed its end.
-- tickets.sold_at is dropped: version 5's sales are moved into sales, with their times.
--
-- Order. The emission's blocks in block order (sale_state.block); in a block, index order, as
-- the sequence gives the numbers (a number taken by a sale that rolls back is not given again
-- at once: that ticket goes to sale_returns when its block's sequence passes the end). Once
-- every block not withdrawn has passed its end, the tickets of sale_returns, in block then
-- index order. A block loaded later than a block with a higher number is sold from as soon as
-- it is loaded (it becomes the block sold from), and the other one resumes where it stopped.
--
-- Exactly once, none skipped. The sequence gives each index of a block once; the INSERT into
-- sales is ON CONFLICT DO NOTHING on the primary key, so an index already sold (by version 5,
-- or from sale_returns while its first sale was still in flight) is skipped for the next one.
-- When a block's sequence passes its end, one sale (under the emission's sale_state row lock)
-- lists every index of the block without a committed sale into sale_returns, those of sales
-- in flight included; taking a ticket from sale_returns deletes its row and inserts its sale in
-- one statement, so a rollback puts it back, and a ticket whose first sale committed meanwhile
-- conflicts on the primary key and is dropped from the list. Durable as the seller's
-- transaction.
--
-- Withdrawal and closing. A sale first locks the table sales in ROW EXCLUSIVE mode, in a
-- statement of its own; a withdrawal or a closing locks it in SHARE mode (sale_hold: waiting
-- for the sales in flight to end and holding new ones back until it commits), then records
-- itself and updates sale_state (sale_refresh). A sale's next statement has a new snapshot
-- (READ COMMITTED; the sale function refuses another isolation level), taken after the lock:
-- it sees every withdrawal and closing committed before. The lock is the table's, so a
-- withdrawal or a closing holds the sales of every emission of the database until it commits:
-- `load` applies withdrawals at the end of the block's transaction, and `close` is one short
-- transaction. A seller cannot take the SHARE lock itself (LOCK TABLE in that mode needs
-- UPDATE, DELETE or TRUNCATE on the table, which ef_seller has not). A per-emission lock
-- (a table per emission locked by dynamic SQL) cost the sale path 0.08 of the INSERT rate
-- (docs/PERFORMANCE.md).

SET LOCAL ROLE ef_loader;

-- The sales, append-only. No foreign key: checking it would lock the block's row in KEY SHARE
-- mode at every sale, and 64 sellers at once would share that lock through multixacts;
-- db-verify checks that every sale is of a loaded ticket.
CREATE TABLE sales (
    block_id bigint NOT NULL,
    idx      integer NOT NULL CHECK (idx >= 0),
    sold_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (block_id, idx)
);
INSERT INTO sales (block_id, idx, sold_at)
SELECT t.block_id, t.idx, t.sold_at FROM tickets t WHERE t.sold_at IS NOT NULL;
CREATE FUNCTION refuse_sale_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'sales rows are never changed or deleted: a ticket sold stays sold'
        USING ERRCODE = 'integrity_constraint_violation';
END
$$;
CREATE TRIGGER sales_immutable BEFORE UPDATE OR DELETE ON sales
FOR EACH ROW EXECUTE FUNCTION refuse_sale_change();
CREATE TRIGGER sales_untruncatable BEFORE TRUNCATE ON sales
FOR EACH STATEMENT EXECUTE FUNCTION refuse_sale_change();

CREATE TABLE sale_blocks (
    block_id    bigint PRIMARY KEY REFERENCES blocks,
    emission_id bigint NOT NULL REFERENCES emissions,
    block       integer NOT NULL,
    tickets     integer NOT NULL CHECK (tickets >= 0),
    -- The block's sequence: its next value is the next index to sell.
    seq         regclass NOT NULL,
    -- The sequence has passed the block's last ticket, and the block's tickets then unsold
    -- are in sale_returns.
    passed      boolean NOT NULL DEFAULT false,
    -- Loaded under version 5, whose lanes sold tickets out of index order: some above the
    -- sequence's start were sold already (db-verify allows them).
    migrated    boolean NOT NULL DEFAULT false,
    UNIQUE (emission_id, block)
);

CREATE TABLE sale_state (
    emission_id bigint PRIMARY KEY REFERENCES emissions,
    -- Not closed and not withdrawn as a whole.
    on_sale     boolean NOT NULL,
    -- The block sold from now: a copy of its sale_blocks row, so that a sale reads one row.
    block_id    bigint,
    block       integer,
    seq         regclass,
    tickets     integer,
    CHECK ((block_id IS NULL) = (seq IS NULL) AND (block_id IS NULL) = (tickets IS NULL)
           AND (block_id IS NULL) = (block IS NULL))
);

CREATE TABLE sale_returns (
    emission_id bigint NOT NULL,
    block       integer NOT NULL,
    block_id    bigint NOT NULL,
    idx         integer NOT NULL,
    PRIMARY KEY (emission_id, block, idx)
);

-- A block's sequence and sale_blocks row, from index `p_first` (0 for a block just loaded);
-- with the emission's first block, the emission's sale_state row. A block loaded
-- later is sold from when the block sold from has passed its end (or at once when none is).
CREATE FUNCTION sale_open_block(p_block_id bigint, p_first integer) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    b record;
    -- The schema's name, quoted: the search_path starts with pg_catalog, where nothing may
    -- be created.
    v_schema text := (SELECT c.relnamespace::regnamespace::text FROM pg_class c
                      WHERE c.oid = 'sale_blocks'::regclass);
    v_seq text := format('%s.%I', v_schema, format('sale_seq_%s', p_block_id));
BEGIN
    SELECT bl.emission_id, bl.block, bl.tickets INTO STRICT b FROM blocks bl
    WHERE bl.block_id = p_block_id;
    EXECUTE format('CREATE SEQUENCE %s AS integer MINVALUE 0 START %s NO CYCLE', v_seq,
                   least(p_first, b.tickets));
    EXECUTE format('REVOKE ALL ON SEQUENCE %s FROM PUBLIC', v_seq);
    -- db-verify reads where it is (pg_sequence_last_value).
    EXECUTE format('GRANT SELECT ON SEQUENCE %s TO ef_auditor', v_seq);
    INSERT INTO sale_blocks (block_id, emission_id, block, tickets, seq)
    VALUES (p_block_id, b.emission_id, b.block, b.tickets, v_seq::regclass);
    IF NOT EXISTS (SELECT 1 FROM sale_state s WHERE s.emission_id = b.emission_id) THEN
        INSERT INTO sale_state (emission_id, on_sale) VALUES (b.emission_id, false);
        PERFORM sale_refresh(b.emission_id);
    END IF;
END
$$;

-- Sets the emission's sale_state from the tables: on sale unless closed or withdrawn, and the
-- block sold from. The caller holds the sales back (sale_hold) or locks the sale_state row.
CREATE FUNCTION sale_refresh(p_emission_id bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE sale_state s
    SET on_sale = NOT EXISTS (SELECT 1 FROM closings c WHERE c.emission_id = p_emission_id)
              AND NOT EXISTS (SELECT 1 FROM withdrawals w
                              WHERE w.emission_id = p_emission_id AND w.block IS NULL),
        (block_id, block, seq, tickets) = (
            SELECT n.block_id, n.block, n.seq, n.tickets FROM (
                SELECT sb.block_id, sb.block, sb.seq, sb.tickets FROM sale_blocks sb
                WHERE sb.emission_id = p_emission_id AND NOT sb.passed
                  AND NOT EXISTS (SELECT 1 FROM withdrawals w
                                  WHERE w.emission_id = p_emission_id AND w.block = sb.block)
                ORDER BY sb.block LIMIT 1) n
            RIGHT JOIN (SELECT 1) one ON true)
    WHERE s.emission_id = p_emission_id;
END
$$;

-- Waits for the sales in flight to end and holds new ones back until the caller's
-- transaction ends (a withdrawal, a closing).
CREATE FUNCTION sale_hold() RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    LOCK TABLE sales IN SHARE MODE;
END
$$;

-- Version 5's blocks and emissions: each block's sequence starts at its first unsold ticket
-- (tickets above it that version 5 sold, in other lanes, are skipped by the primary key).
DO $migrate$
DECLARE
    b record;
BEGIN
    FOR b IN
        SELECT bl.block_id,
               coalesce((SELECT min(t.idx) FROM tickets t
                         WHERE t.block_id = bl.block_id AND t.sold_at IS NULL),
                        bl.tickets)::integer AS first
        FROM blocks bl ORDER BY bl.emission_id, bl.block
    LOOP
        PERFORM sale_open_block(b.block_id, b.first);
        UPDATE sale_blocks sb SET migrated = true WHERE sb.block_id = b.block_id;
    END LOOP;
    PERFORM sale_refresh(e.emission_id) FROM emissions e;
END
$migrate$;

-- The sale when the first try of sell_next_ticket sold nothing: the ticket was sold already,
-- the block's sequence has passed its end, no block is left (the tickets returned), or the
-- emission is off sale. In a function of its own so that the common sale runs a function
-- with no variables to set up (measured: 0.03 of the INSERT rate, docs/PERFORMANCE.md).
CREATE FUNCTION sale_next_slow(p_emission_id bigint)
RETURNS TABLE (block integer, idx integer, serial text, prize_cents bigint, layout text,
               sha256 bytea)
LANGUAGE plpgsql AS $$
DECLARE
    s record;
    v_last bigint;
    v_waits integer := 0;
BEGIN
    LOOP
        -- The sale: the next number of the block sold from, its sale, its ticket (the same
        -- statement as sell_next_ticket's, tried again after a skip or a change of block;
        -- kept there too so that the common sale is one call of a function without variables).
        RETURN QUERY
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
        SELECT n.block, t.idx, t.serial, t.prize_cents, t.layout, t.sha256
        FROM sold JOIN n ON true
        JOIN tickets t ON t.block_id = sold.block_id AND t.idx = sold.idx;
        IF FOUND THEN
            RETURN;
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
        RETURN QUERY
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
        SELECT r.block, t.idx, t.serial, t.prize_cents, t.layout, t.sha256
        FROM sold JOIN r ON true
        JOIN tickets t ON t.block_id = sold.block_id AND t.idx = sold.idx;
        IF FOUND THEN
            RETURN;
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
-- withdrawn, or unknown). Order and guarantees: above.
DROP FUNCTION sell_next_ticket(bigint);
CREATE FUNCTION sell_next_ticket(p_emission_id bigint)
RETURNS TABLE (block integer, idx integer, serial text, prize_cents bigint, layout text,
               sha256 bytea)
LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
    -- In a statement of its own: what follows sees every withdrawal and closing committed
    -- before it.
    LOCK TABLE sales IN ROW EXCLUSIVE MODE;
    -- The sale: the next number of the block sold from, its sale, its ticket.
    RETURN QUERY
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
    SELECT n.block, t.idx, t.serial, t.prize_cents, t.layout, t.sha256
    FROM sold JOIN n ON true
    JOIN tickets t ON t.block_id = sold.block_id AND t.idx = sold.idx;
    IF FOUND THEN
        RETURN;
    END IF;
    RETURN QUERY SELECT * FROM sale_next_slow(p_emission_id);
END
$$;

-- Tickets: no change at all now (a sale is a row of sales).
DROP TRIGGER tickets_immutable ON tickets;
CREATE FUNCTION refuse_ticket_update() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'ticket % of block_id % is immutable: a sale is a row of sales, made by sell_next_ticket', OLD.idx, OLD.block_id
        USING ERRCODE = 'integrity_constraint_violation';
END
$$;
CREATE TRIGGER tickets_immutable BEFORE UPDATE ON tickets
FOR EACH ROW EXECUTE FUNCTION refuse_ticket_update();

-- The views read the sales; then sold_at and the cursors go.
DROP VIEW prizes_remaining;
DROP VIEW emission_reconciliation;
DROP VIEW emission_tier_reconciliation;
DROP VIEW block_reconciliation;
DROP VIEW block_tier_reconciliation;
ALTER TABLE tickets DROP COLUMN sold_at;
DROP TABLE sale_cursors;
DROP FUNCTION refuse_cursor_change();

-- Per block and prize tier: the manifest's count against the tickets sold and unsold.
CREATE VIEW block_tier_reconciliation AS
SELECT bp.block_id, b.emission_id, b.block, bp.prize_cents,
       bp.count AS manifest_count,
       coalesce(s.sold, 0) AS sold,
       coalesce(t.n, 0) - coalesce(s.sold, 0) AS unsold,
       bp.prize_cents * coalesce(s.sold, 0) AS paid_cents,
       bp.prize_cents * (coalesce(t.n, 0) - coalesce(s.sold, 0)) AS remaining_cents
FROM block_prizes bp
JOIN blocks b USING (block_id)
LEFT JOIN (
    SELECT t.block_id, t.prize_cents, count(*) AS n
    FROM tickets t GROUP BY t.block_id, t.prize_cents
) t ON t.block_id = bp.block_id AND t.prize_cents = bp.prize_cents
LEFT JOIN (
    SELECT t.block_id, t.prize_cents, count(*) AS sold
    FROM sales x JOIN tickets t ON t.block_id = x.block_id AND t.idx = x.idx
    GROUP BY t.block_id, t.prize_cents
) s ON s.block_id = bp.block_id AND s.prize_cents = bp.prize_cents;

-- As in version 1 (schema.sql).
CREATE VIEW block_reconciliation AS
SELECT b.block_id, b.emission_id, e.game, e.stake_cents, e.emission, b.block,
       b.tickets, b.total_prizes_cents,
       sum(r.sold)::bigint AS sold,
       sum(r.unsold)::bigint AS unsold,
       sum(r.paid_cents)::bigint AS paid_cents,
       sum(r.remaining_cents)::bigint AS remaining_cents,
       max(r.prize_cents) AS top_prize_cents,
       sum(r.unsold) FILTER (WHERE r.prize_cents = (
           SELECT max(p.prize_cents) FROM block_prizes p WHERE p.block_id = b.block_id
       ))::bigint AS top_prizes_remaining,
       CASE WHEN sum(r.sold) > 0
            THEN sum(r.paid_cents)::numeric / (sum(r.sold) * e.stake_cents)
       END AS payout_so_far
FROM blocks b
JOIN emissions e USING (emission_id)
JOIN block_tier_reconciliation r USING (block_id)
GROUP BY b.block_id, e.emission_id;

CREATE VIEW emission_tier_reconciliation AS
SELECT emission_id, prize_cents,
       sum(manifest_count)::bigint AS manifest_count,
       sum(sold)::bigint AS sold,
       sum(unsold)::bigint AS unsold,
       sum(paid_cents)::bigint AS paid_cents,
       sum(remaining_cents)::bigint AS remaining_cents
FROM block_tier_reconciliation
GROUP BY emission_id, prize_cents;

CREATE VIEW emission_reconciliation AS
SELECT e.emission_id, e.game, e.stake_cents, e.emission, e.kind,
       count(DISTINCT br.block_id)::bigint AS blocks,
       sum(br.tickets)::bigint AS tickets,
       sum(br.total_prizes_cents)::bigint AS total_prizes_cents,
       sum(br.sold)::bigint AS sold,
       sum(br.unsold)::bigint AS unsold,
       sum(br.paid_cents)::bigint AS paid_cents,
       sum(br.remaining_cents)::bigint AS remaining_cents,
       (SELECT max(t.prize_cents) FROM emission_tier_reconciliation t
        WHERE t.emission_id = e.emission_id) AS top_prize_cents,
       (SELECT t.unsold FROM emission_tier_reconciliation t
        WHERE t.emission_id = e.emission_id ORDER BY t.prize_cents DESC LIMIT 1)
           AS top_prizes_remaining,
       CASE WHEN sum(br.sold) > 0
            THEN sum(br.paid_cents)::numeric / (sum(br.sold) * e.stake_cents)
       END AS payout_so_far
FROM emissions e
JOIN block_reconciliation br USING (emission_id)
GROUP BY e.emission_id;

-- As in version 4 (schema_4.sql): outcome-blind, per emission and prize tier.
CREATE VIEW prizes_remaining AS
SELECT b.emission_id, bp.prize_cents,
       sum(bp.count)::bigint AS original,
       coalesce(sum(r.unsold) FILTER (WHERE NOT o.off_sale), 0)::bigint AS remaining
FROM blocks b
JOIN block_prizes bp ON bp.block_id = b.block_id
JOIN block_tier_reconciliation r
  ON r.block_id = bp.block_id AND r.prize_cents = bp.prize_cents
CROSS JOIN LATERAL (
    SELECT EXISTS (SELECT 1 FROM closings c WHERE c.emission_id = b.emission_id)
        OR EXISTS (SELECT 1 FROM withdrawals w
                   WHERE w.emission_id = b.emission_id
                     AND (w.block IS NULL OR w.block = b.block)) AS off_sale
) o
WHERE bp.prize_cents > 0
GROUP BY b.emission_id, bp.prize_cents;

-- search_path and privileges: the functions run with the schema first after pg_catalog; the
-- sale function is the sellers' only way in; the new tables are the auditors' to read.
DO $grants$
DECLARE
    s text := current_schema();
    f text;
BEGIN
    FOREACH f IN ARRAY ARRAY['sell_next_ticket(bigint)', 'sale_next_slow(bigint)', 'sale_open_block(bigint, integer)', 'sale_refresh(bigint)',
                             'sale_hold()'] LOOP
        EXECUTE format('ALTER FUNCTION %I.%s SET search_path = pg_catalog, %I, pg_temp', s, f, s);
        EXECUTE format('REVOKE ALL ON FUNCTION %I.%s FROM PUBLIC', s, f);
    END LOOP;
    EXECUTE format('GRANT EXECUTE ON FUNCTION %I.sell_next_ticket(bigint) TO ef_seller', s);
    EXECUTE format('GRANT SELECT ON %1$I.emissions, %1$I.blocks, %1$I.block_prizes,
                    %1$I.block_tier_reconciliation, %1$I.block_reconciliation,
                    %1$I.emission_tier_reconciliation, %1$I.emission_reconciliation,
                    %1$I.prizes_remaining
                    TO ef_seller', s);
    EXECUTE format('GRANT SELECT ON %1$I.sales, %1$I.sale_blocks, %1$I.sale_state,
                    %1$I.sale_returns, %1$I.block_tier_reconciliation,
                    %1$I.block_reconciliation, %1$I.emission_tier_reconciliation,
                    %1$I.emission_reconciliation, %1$I.prizes_remaining
                    TO ef_auditor', s);
END
$grants$;
