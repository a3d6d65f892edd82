-- emission-factory: schema version 3. Least privilege, immutable tickets, and sales spread
-- over lanes.
--
-- Roles. Three NOLOGIN group roles, the same in every database of the cluster (roles are the
-- cluster's), which the operator grants to login roles (README, "Roles"):
--   ef_loader   owns every object of the schema; `load` sets it for each block's transaction;
--   ef_seller   EXECUTE on the sale function, SELECT on what a game server reads (emissions,
--               blocks, block_prizes, the reconciliation views); no INSERT, UPDATE, DELETE or
--               even SELECT on tickets or sale_cursors: it sells only through sell_next_ticket,
--               and cannot read where the unsold prizes are;
--   ef_auditor  SELECT on every table and view of the schema, nothing else.
-- They are created here when missing (the loading role needs CREATEROLE for that, or an
-- administrator creates them first), and the schema's objects are handed to ef_loader.
--
-- Immutability. A trigger refuses any change to a ticket row but the sale (sold_at from NULL to
-- a time, nothing else), and any DELETE; another refuses any change to a sale cursor but a move
-- to its lane's next ticket. The owner can still disable triggers: db-verify, which recomputes
-- every hash and Merkle root from the rows and checks the cursors against sold_at, is what
-- catches an owner (README, "Re-verification inside the database").
--
-- Lanes. Version 2 kept one cursor row per block, which every seller locked in turn: sales
-- queued on it and fell as sellers were added. Now each block is split into `lanes` lanes
-- (64, or fewer for a block of fewer tickets): lane l holds the tickets l, l + lanes,
-- l + 2 lanes, ..., and has its own cursor row. A sale locks the cursor of the lane with the
-- lowest next ticket that no sale in flight holds (FOR UPDATE SKIP LOCKED), so concurrent
-- sellers take different lanes and do not wait for one another.

DO $roles$
DECLARE
    r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['ef_loader', 'ef_seller', 'ef_auditor'] LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = r) THEN
            BEGIN
                EXECUTE format('CREATE ROLE %I NOLOGIN', r);
            EXCEPTION
                -- Created meanwhile by a loader of another database of the cluster (advisory
                -- locks are per database).
                WHEN duplicate_object OR unique_violation THEN NULL;
                WHEN insufficient_privilege THEN
                    RAISE EXCEPTION 'the role % does not exist and the loading role % may not create it (it lacks CREATEROLE)', r, current_user
                        USING ERRCODE = 'insufficient_privilege',
                              HINT = 'an administrator runs once: CREATE ROLE ef_loader NOLOGIN; CREATE ROLE ef_seller NOLOGIN; CREATE ROLE ef_auditor NOLOGIN; GRANT ef_loader TO <loading role>; GRANT CREATE ON SCHEMA public TO ef_loader (README, "Roles")';
            END;
        END IF;
    END LOOP;
    IF NOT pg_catalog.pg_has_role(current_user, 'ef_loader', 'MEMBER') THEN
        EXECUTE format('GRANT ef_loader TO %I', current_user);
    END IF;
    IF NOT pg_catalog.has_schema_privilege('ef_loader', current_schema(), 'CREATE') THEN
        EXECUTE format('GRANT USAGE, CREATE ON SCHEMA %I TO ef_loader', current_schema());
    END IF;
END
$roles$;

-- The sale cursors, one per lane. A lane is sold out when next_idx >= tickets.
DROP FUNCTION sell_next_ticket(bigint);
ALTER TABLE sale_cursors RENAME TO sale_cursors_2;
CREATE TABLE sale_cursors (
    block_id bigint NOT NULL REFERENCES blocks,
    lane     integer NOT NULL CHECK (lane >= 0),
    lanes    integer NOT NULL CHECK (lanes >= 1 AND lane < lanes),
    -- The block's tickets (blocks.tickets), here so that a sale reads one row.
    tickets  integer NOT NULL CHECK (tickets >= 1),
    -- The index of the lane's next ticket to sell: lane + k * lanes.
    next_idx integer NOT NULL CHECK (next_idx >= lane AND (next_idx - lane) % lanes = 0),
    PRIMARY KEY (block_id, lane)
);

-- Blocks loaded before: each lane starts at its first unsold ticket (a lane sold out at the
-- first of its indices past the block's end).
INSERT INTO sale_cursors (block_id, lane, lanes, tickets, next_idx)
SELECT b.block_id, l.lane, l.lanes, b.tickets,
       coalesce(u.first_unsold,
                l.lane + l.lanes * ((b.tickets - l.lane + l.lanes - 1) / l.lanes))
FROM blocks b
CROSS JOIN LATERAL (SELECT least(64, b.tickets)::integer AS lanes) n
CROSS JOIN LATERAL (SELECT g AS lane, n.lanes FROM generate_series(0, n.lanes - 1) g) l
LEFT JOIN (
    SELECT t.block_id, t.idx % least(64, bb.tickets) AS lane, min(t.idx) AS first_unsold
    FROM tickets t JOIN blocks bb ON bb.block_id = t.block_id
    WHERE t.sold_at IS NULL
    GROUP BY 1, 2
) u ON u.block_id = b.block_id AND u.lane = l.lane
WHERE b.tickets >= 1;
DROP TABLE sale_cursors_2;

-- Sells the next ticket of an emission and returns it (no row once it is sold out).
--
-- Order: the emission's blocks in block order. In a block, a connection sells from its own
-- lane, lane (pg_backend_pid() mod lanes), in index order while that lane has tickets and no
-- other sale in flight holds it; otherwise from the free lane with the lowest next ticket.
-- So one connection selling alone sells its lane p as p, p + lanes, p + 2 lanes, ..., then the
-- block's other lanes; many connections sell side by side, each in its own lane, without
-- waiting for one another. When every lane left in a block is held by sales in flight, the
-- seller takes the next block's; when every lane left in the emission is held, it waits.
--
-- Exactly once, none skipped: a lane's cursor row is locked by the sale that moves it, and the
-- ticket at the cursor is marked sold in the same transaction; if that transaction rolls back,
-- the cursor and sold_at roll back with it and the ticket is the lane's next again. Durable as
-- the seller's transaction is (synchronous_commit on, the server's default).
--
-- Each probe is by primary key (block_id, lane): the cursor rows are updated thousands of
-- times a second, and a scan of the table would read every dead version of them.
--
-- SECURITY DEFINER, owned by ef_loader, with a fixed search_path (pg_catalog first, the
-- schema, pg_temp last: a seller's temporary table cannot stand in for a table of the schema).
CREATE FUNCTION sell_next_ticket(p_emission_id bigint)
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
        v_lane := NULL;
        v_open := false;
        FOR v_block_id, v_block IN
            SELECT bl.block_id, bl.block FROM blocks bl
            WHERE bl.emission_id = p_emission_id ORDER BY bl.block
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
        -- Every lane left is held by a sale in flight: wait for the first of those sales to
        -- end, then look again. The wait is in a subtransaction rolled back at once, so that
        -- the waiting seller holds no lock while it waits (waiters holding a lane each while
        -- waiting for another's would deadlock).
        BEGIN
            PERFORM 1 FROM sale_cursors s JOIN blocks bl ON bl.block_id = s.block_id
            WHERE bl.emission_id = p_emission_id AND s.next_idx < s.tickets
            ORDER BY bl.block, s.next_idx
            LIMIT 1
            FOR UPDATE OF s;
            RAISE EXCEPTION USING ERRCODE = 'EF001';
        EXCEPTION
            WHEN SQLSTATE 'EF001' THEN NULL;
            -- Two sellers whose transactions each hold a lane and want another: one gives
            -- way a few times, then gets the error (its transaction should end).
            WHEN deadlock_detected THEN
                deadlocks := deadlocks + 1;
                IF deadlocks > 3 THEN
                    RAISE;
                END IF;
        END;
    END LOOP;
END
$$;

-- Immutability.
CREATE FUNCTION refuse_ticket_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'ticket % of block_id % is immutable: only sell_next_ticket changes a ticket row (it sets sold_at once)', OLD.idx, OLD.block_id
        USING ERRCODE = 'integrity_constraint_violation';
END
$$;
CREATE TRIGGER tickets_immutable
BEFORE UPDATE ON tickets FOR EACH ROW
WHEN (OLD.sold_at IS NOT NULL OR NEW.sold_at IS NULL
      OR NEW.block_id <> OLD.block_id OR NEW.idx <> OLD.idx OR NEW.serial <> OLD.serial
      OR NEW.prize_cents <> OLD.prize_cents OR NEW.layout <> OLD.layout
      OR NEW.sha256 <> OLD.sha256)
EXECUTE FUNCTION refuse_ticket_change();
CREATE TRIGGER tickets_undeletable
BEFORE DELETE ON tickets FOR EACH ROW EXECUTE FUNCTION refuse_ticket_change();

CREATE FUNCTION refuse_cursor_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the sale cursor of lane % of block_id % only moves to its lane''s next ticket, by sell_next_ticket', OLD.lane, OLD.block_id
        USING ERRCODE = 'integrity_constraint_violation';
END
$$;
CREATE TRIGGER sale_cursors_forward_only
BEFORE UPDATE ON sale_cursors FOR EACH ROW
WHEN (NEW.next_idx <> OLD.next_idx + OLD.lanes OR NEW.block_id <> OLD.block_id
      OR NEW.lane <> OLD.lane OR NEW.lanes <> OLD.lanes OR NEW.tickets <> OLD.tickets)
EXECUTE FUNCTION refuse_cursor_change();
CREATE TRIGGER sale_cursors_undeletable
BEFORE DELETE ON sale_cursors FOR EACH ROW EXECUTE FUNCTION refuse_cursor_change();

-- Ownership, search_path, privileges.
DO $owners$
DECLARE
    s text := current_schema();
    o record;
BEGIN
    FOR o IN
        SELECT c.relname, c.relkind FROM pg_catalog.pg_class c
        WHERE c.relnamespace = s::regnamespace AND c.relkind IN ('r', 'p', 'v')
          AND (c.relname IN ('schema_version', 'database_kind', 'emissions', 'blocks',
                             'block_prizes', 'tickets', 'sale_cursors',
                             'block_tier_reconciliation', 'block_reconciliation',
                             'emission_tier_reconciliation', 'emission_reconciliation')
               OR c.relname ~ '^tickets_[0-9]+$')
          AND c.relowner <> 'ef_loader'::regrole::oid
    LOOP
        EXECUTE format('ALTER %s %I.%I OWNER TO ef_loader',
                       CASE o.relkind WHEN 'v' THEN 'VIEW' ELSE 'TABLE' END, s, o.relname);
    END LOOP;
    EXECUTE format('ALTER FUNCTION %I.sell_next_ticket(bigint) OWNER TO ef_loader', s);
    EXECUTE format('ALTER FUNCTION %I.refuse_ticket_change() OWNER TO ef_loader', s);
    EXECUTE format('ALTER FUNCTION %I.refuse_cursor_change() OWNER TO ef_loader', s);
    EXECUTE format('ALTER FUNCTION %I.sell_next_ticket(bigint) SET search_path = pg_catalog, %I, pg_temp', s, s);
    EXECUTE format('REVOKE ALL ON FUNCTION %I.sell_next_ticket(bigint) FROM PUBLIC', s);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %I.sell_next_ticket(bigint) TO ef_seller', s);
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO ef_seller, ef_auditor', s);
    EXECUTE format('GRANT SELECT ON %1$I.emissions, %1$I.blocks, %1$I.block_prizes,
                    %1$I.block_tier_reconciliation, %1$I.block_reconciliation,
                    %1$I.emission_tier_reconciliation, %1$I.emission_reconciliation
                    TO ef_seller', s);
    EXECUTE format('GRANT SELECT ON %1$I.schema_version, %1$I.database_kind, %1$I.emissions,
                    %1$I.blocks, %1$I.block_prizes, %1$I.tickets, %1$I.sale_cursors,
                    %1$I.block_tier_reconciliation, %1$I.block_reconciliation,
                    %1$I.emission_tier_reconciliation, %1$I.emission_reconciliation
                    TO ef_auditor', s);
END
$owners$;
