-- emission-factory: schema version 2. The sale order is kept by one cursor row per block
-- instead of an index over the unsold tickets.
--
-- Version 1 indexed the unsold tickets of every block so that sell_next_ticket could find the
-- first one; building that index was a second sort of every block at load time (about 0.3 s
-- of the server's CPU per 900 000 tickets) for what one integer per block says as well: the
-- index of the block's next ticket to sell. sell_next_ticket locks the emission's first block
-- with tickets left (its cursor row, FOR UPDATE), takes that ticket by the primary key and
-- moves the cursor on, all in the seller's transaction. A concurrent seller waits on the row
-- lock until that transaction ends, then sees the cursor it left: no ticket is sold twice, none
-- is skipped, and block order is strict even for sales in flight (a rolled-back sale moves the
-- cursor back with it).

-- Dropped first: this locks the tickets until the migration commits, so no seller of version 1
-- sells while the cursors are computed.
DROP INDEX tickets_unsold;

-- The next ticket to sell of each block, by index; equal to the block's tickets when sold out.
CREATE TABLE sale_cursors (
    block_id bigint PRIMARY KEY REFERENCES blocks,
    next_idx integer NOT NULL CHECK (next_idx >= 0)
);

-- Blocks loaded under version 1 start at their first unsold ticket.
INSERT INTO sale_cursors (block_id, next_idx)
SELECT b.block_id,
       coalesce((SELECT min(t.idx) FROM tickets t
                 WHERE t.block_id = b.block_id AND t.sold_at IS NULL), b.tickets)
FROM blocks b;

-- Sells the next unsold ticket of an emission, in block order then index order, and returns it
-- (no row once the emission is sold out). Safe under concurrency: sellers queue on the cursor
-- row of the block they sell from, so keep a sale's transaction short.
CREATE OR REPLACE FUNCTION sell_next_ticket(p_emission_id bigint)
RETURNS TABLE (block integer, idx integer, serial text, prize_cents bigint, layout text,
               sha256 bytea)
LANGUAGE plpgsql AS $$
DECLARE
    c record;
BEGIN
    LOOP
        -- After waiting for the lock, the row is read again as the other seller left it; a
        -- block it sold out no longer qualifies and the next block's row is taken.
        SELECT s.block_id, s.next_idx, b.block AS number INTO c
        FROM sale_cursors s JOIN blocks b ON b.block_id = s.block_id
        WHERE b.emission_id = p_emission_id AND s.next_idx < b.tickets
        ORDER BY b.block
        LIMIT 1
        FOR UPDATE OF s;
        IF NOT FOUND THEN
            RETURN;
        END IF;
        UPDATE sale_cursors s SET next_idx = c.next_idx + 1 WHERE s.block_id = c.block_id;
        RETURN QUERY
        UPDATE tickets t SET sold_at = clock_timestamp()
        WHERE t.block_id = c.block_id AND t.idx = c.next_idx AND t.sold_at IS NULL
        RETURNING c.number, t.idx, t.serial, t.prize_cents, t.layout, t.sha256;
        IF FOUND THEN
            RETURN;
        END IF;
        -- Sold already (by version 1 out of order, or by hand): on to the next ticket.
    END LOOP;
END
$$;
