-- emission-factory: the game server's tables for pre-loaded emissions, schema version 1.
--
-- Applied by `emission-factory load` in the transaction of the first block it loads (so a
-- failed first load leaves the database as it was), under an advisory lock so that loaders
-- started at once apply it once. Later versions are added as new migrations, never by editing
-- this one; `schema_version` lists those applied.

CREATE TABLE schema_version (
    version    integer PRIMARY KEY,
    applied_at timestamptz NOT NULL DEFAULT now()
);

-- A database holds test emissions or production emissions, never both: the first block loaded
-- writes the one row, and every emission's kind must be that row's (the foreign key below).
CREATE TABLE database_kind (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    kind      text NOT NULL UNIQUE CHECK (kind IN ('test', 'production'))
);

CREATE TABLE emissions (
    emission_id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    game              text NOT NULL,
    game_name         text NOT NULL,
    stake_cents       bigint NOT NULL CHECK (stake_cents > 0),
    emission          integer NOT NULL CHECK (emission >= 1),
    kind              text NOT NULL REFERENCES database_kind (kind),
    public_key_sha256 text NOT NULL,
    seed_sha256       text NOT NULL,
    UNIQUE (game, stake_cents, emission)
);

CREATE TABLE blocks (
    block_id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    emission_id        bigint NOT NULL REFERENCES emissions,
    block              integer NOT NULL CHECK (block >= 1),
    tickets            bigint NOT NULL CHECK (tickets >= 0),
    winners            bigint NOT NULL CHECK (winners >= 0),
    total_prizes_cents bigint NOT NULL CHECK (total_prizes_cents >= 0),
    -- The manifest's exact bytes (the signed message), its SHA-256 and its Ed25519 signature:
    -- anyone can check the block's origin from the database alone.
    manifest           text NOT NULL,
    manifest_sha256    text NOT NULL,
    signature          bytea NOT NULL CHECK (length(signature) = 64),
    csv_sha256         text NOT NULL,
    tickets_root       text NOT NULL,
    loaded_at          timestamptz NOT NULL DEFAULT now(),
    UNIQUE (emission_id, block)
);

-- The manifest's prize list, one row per tier (losers as 0).
CREATE TABLE block_prizes (
    block_id    bigint NOT NULL REFERENCES blocks,
    prize_cents bigint NOT NULL CHECK (prize_cents >= 0),
    count       bigint NOT NULL CHECK (count >= 0),
    PRIMARY KEY (block_id, prize_cents)
);

-- The tickets, one partition per block (tickets_<block_id>): a block is COPYed into a fresh
-- table, indexed in one sort, and attached in the transaction that records the block, so it
-- is there whole or not at all. idx is the ticket's index in the block (from 0), the sale
-- order; sha256 is the ticket hash of FORMAT.md (32 bytes). sold_at is set by
-- sell_next_ticket.
CREATE TABLE tickets (
    block_id    bigint NOT NULL,
    idx         integer NOT NULL CHECK (idx >= 0),
    serial      text NOT NULL,
    prize_cents bigint NOT NULL CHECK (prize_cents >= 0),
    layout      text NOT NULL,
    sha256      bytea NOT NULL CHECK (length(sha256) = 32),
    sold_at     timestamptz,
    PRIMARY KEY (block_id, idx)
) PARTITION BY LIST (block_id);

-- What sell_next_ticket searches: the unsold tickets of a block in index order.
CREATE INDEX tickets_unsold ON tickets (block_id, idx) WHERE sold_at IS NULL;

-- Sells the next unsold ticket of an emission, in block order then index order, and returns
-- it (no row once the emission is sold out). Safe under concurrency: a seller locks the ticket
-- it takes with FOR UPDATE SKIP LOCKED, so sellers never wait for one another and no ticket is
-- sold twice. "Block order" is strict for committed sales, not for sales in flight: while one
-- seller's transaction holds ticket i, another takes i+1; if the first rolls back, ticket i is
-- unsold again and is the next one sold. Every ticket is sold exactly once and none is skipped
-- once all sellers have committed.
CREATE FUNCTION sell_next_ticket(p_emission_id bigint)
RETURNS TABLE (block integer, idx integer, serial text, prize_cents bigint, layout text,
               sha256 bytea)
LANGUAGE plpgsql AS $$
DECLARE
    b record;
BEGIN
    FOR b IN
        SELECT bl.block_id, bl.block FROM blocks bl
        WHERE bl.emission_id = p_emission_id ORDER BY bl.block
    LOOP
        RETURN QUERY
        UPDATE tickets t SET sold_at = clock_timestamp()
        WHERE t.block_id = b.block_id AND t.idx = (
            SELECT u.idx FROM tickets u
            WHERE u.block_id = b.block_id AND u.sold_at IS NULL
            ORDER BY u.idx LIMIT 1
            FOR UPDATE SKIP LOCKED)
        RETURNING b.block, t.idx, t.serial, t.prize_cents, t.layout, t.sha256;
        IF FOUND THEN
            RETURN;
        END IF;
    END LOOP;
END
$$;

-- Per block and prize tier: the manifest's count against the tickets sold and unsold.
CREATE VIEW block_tier_reconciliation AS
SELECT bp.block_id, b.emission_id, b.block, bp.prize_cents,
       bp.count AS manifest_count,
       coalesce(s.sold, 0) AS sold,
       coalesce(s.unsold, 0) AS unsold,
       bp.prize_cents * coalesce(s.sold, 0) AS paid_cents,
       bp.prize_cents * coalesce(s.unsold, 0) AS remaining_cents
FROM block_prizes bp
JOIN blocks b USING (block_id)
LEFT JOIN (
    SELECT t.block_id, t.prize_cents,
           count(*) FILTER (WHERE t.sold_at IS NOT NULL) AS sold,
           count(*) FILTER (WHERE t.sold_at IS NULL) AS unsold
    FROM tickets t GROUP BY t.block_id, t.prize_cents
) s ON s.block_id = bp.block_id AND s.prize_cents = bp.prize_cents;

-- Per block: sold + unsold = tickets, paid + remaining = total_prizes_cents (the manifest's),
-- the top prizes (the block's highest tier) still unsold, and the payout so far (prizes of the
-- tickets sold over their price, as a fraction).
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

-- Per emission and prize tier.
CREATE VIEW emission_tier_reconciliation AS
SELECT emission_id, prize_cents,
       sum(manifest_count)::bigint AS manifest_count,
       sum(sold)::bigint AS sold,
       sum(unsold)::bigint AS unsold,
       sum(paid_cents)::bigint AS paid_cents,
       sum(remaining_cents)::bigint AS remaining_cents
FROM block_tier_reconciliation
GROUP BY emission_id, prize_cents;

-- Per emission: the same as block_reconciliation, over all its loaded blocks.
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
