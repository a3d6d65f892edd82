-- emission-factory: schema version 4. Withdrawal and closing, enforced by the sale function;
-- the outcome-blind count of the prizes remaining.
--
-- withdrawals  the signed withdrawal records (`emission-factory withdraw`, FORMAT.md
--              "Withdrawal record") that `load` found in the emission folders: their exact
--              bytes, SHA-256 and signature, the block they withdraw (NULL: the whole
--              emission) and when they were applied. A block withdrawn is never sold from
--              again; its past sales stay as they were.
-- closings     one row per closed emission (`emission-factory close`): when, and the signed
--              final reconciliation written from the database at that moment. A closed
--              emission sells nothing more.
-- Both are written only by ef_loader and never changed or deleted (triggers); sellers and
-- auditors read them.
--
-- The sale function stops at a withdrawal or a closing committed before its sale: the
-- withdrawing (or closing) transaction first locks every sale cursor of what it stops
-- (waiting for the sales in flight there to end), and a sale checks for withdrawals and the
-- closing again after it has locked its lane, in a statement of its own (a new snapshot in READ
-- COMMITTED). A sale either ends before the withdrawal or closing takes its locks, or sees it.

-- Objects created here belong to ef_loader (the loading role is a member since version 3).
SET LOCAL ROLE ef_loader;

CREATE TABLE withdrawals (
    withdrawal_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    emission_id   bigint NOT NULL REFERENCES emissions,
    -- The record's number in its emission folder (withdrawal-NNNN.json).
    number        integer NOT NULL CHECK (number >= 1),
    -- The block withdrawn; NULL: the whole emission.
    block         integer CHECK (block >= 1),
    reason        text NOT NULL,
    -- The record's exact bytes (the signed message), their SHA-256 and the Ed25519 signature.
    record        text NOT NULL,
    record_sha256 text NOT NULL,
    signature     bytea NOT NULL CHECK (length(signature) = 64),
    -- When the loader applied it: every sale from what it withdraws is before this time.
    applied_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
    UNIQUE (emission_id, number)
);
CREATE INDEX withdrawals_by_block ON withdrawals (emission_id, block);

CREATE TABLE closings (
    emission_id           bigint PRIMARY KEY REFERENCES emissions,
    -- Every sale of the emission is before this time.
    closed_at             timestamptz NOT NULL,
    -- The final reconciliation's exact bytes (FORMAT.md, "Closing reconciliation"), SHA-256,
    -- and its Ed25519 signature with the emission's key.
    reconciliation        text NOT NULL,
    reconciliation_sha256 text NOT NULL,
    signature             bytea NOT NULL CHECK (length(signature) = 64)
);

CREATE FUNCTION refuse_record_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% rows are signed records: they are never changed or deleted', TG_TABLE_NAME
        USING ERRCODE = 'integrity_constraint_violation';
END
$$;
CREATE TRIGGER withdrawals_immutable BEFORE UPDATE OR DELETE ON withdrawals
FOR EACH ROW EXECUTE FUNCTION refuse_record_change();
CREATE TRIGGER closings_immutable BEFORE UPDATE OR DELETE ON closings
FOR EACH ROW EXECUTE FUNCTION refuse_record_change();

-- Sells the next ticket of an emission and returns it (no row once it is sold out, closed or
-- withdrawn). As version 3 (the order and the guarantees are written there), but a closed
-- emission, a withdrawn emission and a withdrawn block sell nothing.
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
            -- The connection's own lane.
            SELECT s.lane, s.lanes, s.next_idx INTO v_lane, v_lanes, v_next
            FROM sale_cursors s
            WHERE s.block_id = v_block_id
              AND s.lane = pg_backend_pid() % (SELECT f.lanes FROM sale_cursors f
                                               WHERE f.block_id = v_block_id AND f.lane = 0)
              AND s.next_idx < s.tickets
            FOR UPDATE SKIP LOCKED;
            EXIT WHEN FOUND;
            -- The free lane with the lowest next ticket.
            SELECT s.lane, s.lanes, s.next_idx INTO v_lane, v_lanes, v_next
            FROM sale_cursors s
            WHERE s.block_id = v_block_id AND s.next_idx < s.tickets
            ORDER BY s.next_idx
            LIMIT 1
            FOR UPDATE SKIP LOCKED;
            EXIT WHEN FOUND;
            -- None free: sold out, or every lane left held by a sale in flight.
            v_open := v_open OR EXISTS (SELECT 1 FROM sale_cursors s
                                        WHERE s.block_id = v_block_id
                                          AND s.next_idx < s.tickets);
        END LOOP;
        IF v_lane IS NOT NULL THEN
            -- The lane is locked: a withdrawal or closing that committed before is seen now
            -- (one that comes after waits for this sale's transaction to end).
            IF EXISTS (SELECT 1 FROM closings c WHERE c.emission_id = p_emission_id)
               OR EXISTS (SELECT 1 FROM withdrawals w
                          WHERE w.emission_id = p_emission_id
                            AND (w.block IS NULL OR w.block = v_block)) THEN
                CONTINUE;
            END IF;
            UPDATE sale_cursors s SET next_idx = v_next + v_lanes
            WHERE s.block_id = v_block_id AND s.lane = v_lane;
            RETURN QUERY
            UPDATE tickets t SET sold_at = clock_timestamp()
            WHERE t.block_id = v_block_id AND t.idx = v_next AND t.sold_at IS NULL
            RETURNING v_block, t.idx, t.serial, t.prize_cents, t.layout, t.sha256;
            IF FOUND THEN
                RETURN;
            END IF;
            -- Sold already (by version 1 out of order): on to the lane's next ticket.
            CONTINUE;
        END IF;
        IF NOT v_open THEN
            RETURN;
        END IF;
        -- Every lane left is held by a sale in flight (or by a withdrawal or closing being
        -- applied): wait for the first of them to end, then look again, as in version 3.
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
    END LOOP;
END
$$;

-- The public, outcome-blind count: per emission and prize tier (losers left out), the
-- original count of its loaded blocks and how many can still be won, that is are unsold in a
-- block on sale (none once the emission is closed or withdrawn). Nothing per block, nothing
-- positional.
CREATE VIEW prizes_remaining AS
SELECT b.emission_id, bp.prize_cents,
       sum(bp.count)::bigint AS original,
       coalesce(sum(u.unsold) FILTER (WHERE NOT o.off_sale), 0)::bigint AS remaining
FROM blocks b
JOIN block_prizes bp ON bp.block_id = b.block_id
CROSS JOIN LATERAL (
    SELECT EXISTS (SELECT 1 FROM closings c WHERE c.emission_id = b.emission_id)
        OR EXISTS (SELECT 1 FROM withdrawals w
                   WHERE w.emission_id = b.emission_id
                     AND (w.block IS NULL OR w.block = b.block)) AS off_sale
) o
LEFT JOIN (
    SELECT t.block_id, t.prize_cents, count(*) AS unsold
    FROM tickets t WHERE t.sold_at IS NULL GROUP BY t.block_id, t.prize_cents
) u ON u.block_id = bp.block_id AND u.prize_cents = bp.prize_cents
WHERE bp.prize_cents > 0
GROUP BY b.emission_id, bp.prize_cents;

-- search_path and privileges (CREATE OR REPLACE kept the owner and EXECUTE grants, not the
-- search_path).
DO $grants$
DECLARE
    s text := current_schema();
BEGIN
    EXECUTE format('ALTER FUNCTION %I.sell_next_ticket(bigint) SET search_path = pg_catalog, %I, pg_temp', s, s);
    EXECUTE format('GRANT SELECT ON %1$I.withdrawals, %1$I.closings, %1$I.prizes_remaining
                    TO ef_seller, ef_auditor', s);
END
$grants$;


