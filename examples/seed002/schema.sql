-- Seed 002's vendor test, rebuilt from the seed's description on Firebird: a procedure
-- creates orders, each of 1 to 6 order lines; each line's insert fires a trigger that
-- updates the product's INVENTORY row. CREATE_ORDERS_RANDOM draws the lines' products with
-- RAND(), independently of its input, as the vendor's CREATE_100_ORDERS did: a transaction
-- retried after an update conflict writes other rows than its first try. CREATE_ORDERS_FIXED
-- is the fix the seed proposes: the same products for the same input (its SEED argument,
-- which a retry passes again).
--
-- -D products=N sets how many products (the inventory rows the orders contend on) it
-- makes. The script reruns: it empties the procedures, then recreates everything.
-- In PSQL bodies, \: writes a colon that is Firebird's (:variable), not the script's.

CREATE OR ALTER PROCEDURE create_orders_random (thread_id integer, seed bigint, n integer) AS BEGIN END;
CREATE OR ALTER PROCEDURE create_orders_fixed (thread_id integer, seed bigint, n integer) AS BEGIN END;

RECREATE TABLE orderline (
  id         bigint   NOT NULL PRIMARY KEY,
  orders_id  bigint   NOT NULL,
  product_id integer  NOT NULL,
  quantity   smallint NOT NULL
);
RECREATE TABLE orders (
  id          bigint        NOT NULL PRIMARY KEY,
  customer_id integer       NOT NULL,
  thread_id   integer       NOT NULL,
  orderdate   date          NOT NULL,
  netamount   numeric(12,2) NOT NULL,
  tax         numeric(12,2) NOT NULL,
  totalamount numeric(12,2) NOT NULL
);
RECREATE TABLE inventory (
  product_id integer NOT NULL PRIMARY KEY,
  quantity   integer NOT NULL
);
RECREATE TABLE product (
  id    integer       NOT NULL PRIMARY KEY,
  price numeric(12,2) NOT NULL
);
RECREATE SEQUENCE id_gen;

EXECUTE BLOCK AS
  DECLARE i integer = 1;
BEGIN
  WHILE (i <= :products) DO
  BEGIN
    INSERT INTO product (id, price) VALUES (\:i, 1 + mod(\:i * 37, 100));
    INSERT INTO inventory (product_id, quantity) VALUES (\:i, 1000000);
    i = i + 1;
  END
END;

-- Each order line takes its quantity from the product's stock: the row every concurrent
-- order of the product updates.
CREATE OR ALTER TRIGGER orderline_ai FOR orderline AFTER INSERT AS
BEGIN
  UPDATE inventory SET quantity = quantity - new.quantity WHERE product_id = new.product_id;
END;

CREATE OR ALTER PROCEDURE create_orders_random (thread_id integer, seed bigint, n integer) AS
  DECLARE products integer;
  DECLARE oid bigint;
  DECLARE lines integer;
  DECLARE pid integer;
  DECLARE qty smallint;
  DECLARE price numeric(12,2);
  DECLARE net numeric(12,2);
BEGIN
  SELECT count(*) FROM product INTO \:products;
  WHILE (n > 0) DO
  BEGIN
    oid = gen_id(id_gen, 1);
    INSERT INTO orders (id, customer_id, thread_id, orderdate, netamount, tax, totalamount)
      VALUES (\:oid, 1 + cast(rand() * 999 AS integer), \:thread_id, current_date, 0, 0, 0);
    net = 0;
    lines = 1 + cast(rand() * 5 AS integer);
    WHILE (lines > 0) DO
    BEGIN
      pid = 1 + cast(rand() * (products - 1) AS integer); -- whatever the input: seed 002's flaw
      qty = 1 + cast(rand() * 2 AS integer);
      INSERT INTO orderline (id, orders_id, product_id, quantity) VALUES (gen_id(id_gen, 1), \:oid, \:pid, \:qty);
      SELECT price FROM product WHERE id = \:pid INTO \:price;
      net = net + qty * price;
      lines = lines - 1;
    END
    UPDATE orders SET netamount = \:net, tax = \:net * 0.16, totalamount = \:net * 1.16 WHERE id = \:oid;
    n = n - 1;
  END
END;

CREATE OR ALTER PROCEDURE create_orders_fixed (thread_id integer, seed bigint, n integer) AS
  DECLARE products integer;
  DECLARE oid bigint;
  DECLARE lines integer;
  DECLARE pid integer;
  DECLARE qty smallint;
  DECLARE price numeric(12,2);
  DECLARE net numeric(12,2);
  DECLARE k bigint;
BEGIN
  SELECT count(*) FROM product INTO \:products;
  k = seed;
  WHILE (n > 0) DO
  BEGIN
    oid = gen_id(id_gen, 1);
    k = mod(k * 48271, 2147483647); -- a generator of the input's own (Park and Miller)
    INSERT INTO orders (id, customer_id, thread_id, orderdate, netamount, tax, totalamount)
      VALUES (\:oid, 1 + mod(\:k, 1000), \:thread_id, current_date, 0, 0, 0);
    net = 0;
    lines = 1 + mod(k / 1000, 6);
    WHILE (lines > 0) DO
    BEGIN
      k = mod(k * 48271, 2147483647);
      pid = 1 + mod(k, products); -- the same products for the same input: the seed's fix
      qty = 1 + mod(k / 1000, 3);
      INSERT INTO orderline (id, orders_id, product_id, quantity) VALUES (gen_id(id_gen, 1), \:oid, \:pid, \:qty);
      SELECT price FROM product WHERE id = \:pid INTO \:price;
      net = net + qty * price;
      lines = lines - 1;
    END
    UPDATE orders SET netamount = \:net, tax = \:net * 0.16, totalamount = \:net * 1.16 WHERE id = \:oid;
    n = n - 1;
  END
END;
