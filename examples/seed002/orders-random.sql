-- Seed 002's transaction: one call of the order-creating procedure, as the vendor's test
-- made it (CREATE_100_ORDERS, here :orders orders a call). Its products are drawn inside
-- the procedure with RAND(): a retry writes other inventory rows than the try it repeats.
\set seed random(1, 2000000000)
BEGIN;
EXECUTE PROCEDURE create_orders_random(:client_id, :seed, :orders);
COMMIT;
