package tpcc

import (
	"slices"
	"strconv"
	"strings"

	"github.com/dblat/dblat/internal/engine"
)

// The TPC-C procedures in PL/pgSQL (PostgreSQL 11+; see procedures.go for the contract).
//
// Each is a PROCEDURE, called outside a transaction block, that begins with COMMIT: that
// ends the implicit transaction of the CALL statement, so that the next statement, SET
// TRANSACTION, can choose the isolation of the transaction that does the work (SET
// TRANSACTION must come before the transaction's first snapshot, and PL/pgSQL takes one
// for any expression it evaluates, hence nothing in between). The procedure ends with
// COMMIT, or ROLLBACK for New-Order's unused item, and returns its results in INOUT
// parameters (a CALL returns them as one row; OUT parameters in procedures need 14+).
func init() {
	registerProcLanguage("plpgsql", &procLanguage{
		commits: true,
		// Dropped first: CREATE OR REPLACE of a procedure whose parameters changed would
		// add an overload instead of replacing it.
		install: func(engine.Dialect) []string { return append(slices.Clone(plpgsqlDrop), plpgsqlProcedures...) },
		drop:    plpgsqlDrop,
		installed: `SELECT COUNT(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
			WHERE n.nspname = current_schema() AND p.proname IN ('` + strings.Join(procNames[:], "', '") + `')
			AND p.prosrc LIKE '%` + procMarker + `%'`,
		call: func(name string, args, outs int) string {
			return "CALL " + name + "(" + placeholders(args) + strings.Repeat(", NULL", outs) + ")"
		},
	})
}

var plpgsqlDrop = func() []string {
	var q []string
	for _, n := range procNames {
		q = append(q, "DROP PROCEDURE IF EXISTS "+n)
	}
	return q
}()

// sDistCase picks S_DIST_xx for district expression d (§2.4.2.2).
func sDistCase(d string) string {
	var b strings.Builder
	b.WriteString("CASE " + d)
	for i := 1; i <= districtsPerW; i++ {
		b.WriteString(" WHEN " + strconv.Itoa(i) + " THEN " + sDist(i))
	}
	b.WriteString(" END")
	return b.String()
}

var plpgsqlProcedures = []string{
	`CREATE OR REPLACE PROCEDURE tpcc_new_order(p_w_id integer, p_d_id integer, p_c_id integer, p_ol_cnt integer,
	p_all_local integer, p_lines varchar, p_entry_d timestamp,
	INOUT out_o_id integer, INOUT out_c_last varchar, INOUT out_c_credit varchar, INOUT out_c_discount numeric,
	INOUT out_w_tax numeric, INOUT out_d_tax numeric, INOUT out_amount_sum numeric, INOUT out_brands varchar,
	INOUT out_rolled_back integer)
LANGUAGE plpgsql AS $$
-- ` + procMarker + `: New-Order (§2.4.2.2), lines in processing order (encodeLines).
DECLARE
	v_next integer; k integer; v_i integer; v_sw integer; v_qty integer; v_num integer;
	v_price numeric; v_name varchar; v_idata varchar; v_squant integer; v_sdist varchar; v_sdata varchar;
	v_amount numeric;
BEGIN
	COMMIT;
	SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
	SELECT w_tax INTO STRICT out_w_tax FROM warehouse WHERE w_id = p_w_id;
	UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = p_w_id AND d_id = p_d_id
		RETURNING d_tax, d_next_o_id INTO STRICT out_d_tax, v_next;
	out_o_id := v_next - 1;
	SELECT c_discount, c_last, c_credit INTO STRICT out_c_discount, out_c_last, out_c_credit
		FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = p_c_id;
	INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
		VALUES (out_o_id, p_d_id, p_w_id, p_c_id, p_entry_d, NULL, p_ol_cnt, p_all_local);
	INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (out_o_id, p_d_id, p_w_id);
	out_amount_sum := 0;
	out_brands := repeat(' ', p_ol_cnt);
	out_rolled_back := 0;
	FOR k IN 0 .. p_ol_cnt - 1 LOOP
		v_i := substr(p_lines, k * 16 + 1, 6)::integer;
		v_sw := substr(p_lines, k * 16 + 7, 6)::integer;
		v_qty := substr(p_lines, k * 16 + 13, 2)::integer;
		v_num := substr(p_lines, k * 16 + 15, 2)::integer;
		SELECT i_price, i_name, i_data INTO v_price, v_name, v_idata FROM item WHERE i_id = v_i;
		IF NOT FOUND THEN
			-- "Item number is not valid" (§2.4.2.3): the valid items, sorted before it, are done.
			ROLLBACK;
			out_rolled_back := 1;
			RETURN;
		END IF;
		UPDATE stock SET s_quantity = CASE WHEN s_quantity >= v_qty + 10 THEN s_quantity - v_qty ELSE s_quantity - v_qty + 91 END,
			s_ytd = s_ytd + v_qty, s_order_cnt = s_order_cnt + 1,
			s_remote_cnt = s_remote_cnt + CASE WHEN v_sw <> p_w_id THEN 1 ELSE 0 END
			WHERE s_i_id = v_i AND s_w_id = v_sw
			RETURNING s_quantity, ` + sDistCase("p_d_id") + `, s_data INTO STRICT v_squant, v_sdist, v_sdata;
		v_amount := v_qty * v_price;
		out_amount_sum := out_amount_sum + v_amount;
		IF position('ORIGINAL' IN v_idata) > 0 AND position('ORIGINAL' IN v_sdata) > 0 THEN
			out_brands := overlay(out_brands PLACING 'B' FROM v_num FOR 1);
		ELSE
			out_brands := overlay(out_brands PLACING 'G' FROM v_num FOR 1);
		END IF;
		INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
			VALUES (out_o_id, p_d_id, p_w_id, v_num, v_i, v_sw, NULL, v_qty, v_amount, v_sdist);
	END LOOP;
	COMMIT;
END $$`,

	`CREATE OR REPLACE PROCEDURE tpcc_payment(p_w_id integer, p_d_id integer, p_c_w_id integer, p_c_d_id integer,
	p_by_name integer, p_c_id integer, p_c_last varchar, p_amount numeric, p_h_date timestamp,
	INOUT out_c_id integer, INOUT out_c_balance numeric, INOUT out_c_credit varchar, INOUT out_c_data varchar)
LANGUAGE plpgsql AS $$
-- ` + procMarker + `: Payment (§2.5.2.2).
DECLARE
	v_w record; v_d record; v_c record; v_n integer; v_data varchar;
BEGIN
	COMMIT;
	SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
	UPDATE warehouse SET w_ytd = w_ytd + p_amount WHERE w_id = p_w_id
		RETURNING w_name, w_street_1, w_street_2, w_city, w_state, w_zip INTO STRICT v_w;
	UPDATE district SET d_ytd = d_ytd + p_amount WHERE d_w_id = p_w_id AND d_id = p_d_id
		RETURNING d_name, d_street_1, d_street_2, d_city, d_state, d_zip INTO STRICT v_d;
	IF p_by_name = 1 THEN
		SELECT count(*) INTO v_n FROM customer WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_last = p_c_last;
		IF v_n = 0 THEN
			RAISE EXCEPTION 'tpcc: no customer named % in district %/%', p_c_last, p_c_w_id, p_c_d_id;
		END IF;
		-- Position ⌈n/2⌉ sorted by C_FIRST (§2.5.2.2), C_ID breaking ties.
		SELECT c_id INTO out_c_id FROM customer WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_last = p_c_last
			ORDER BY c_first, c_id OFFSET (v_n - 1) / 2 LIMIT 1;
	ELSE
		out_c_id := p_c_id;
	END IF;
	UPDATE customer SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount,
		c_payment_cnt = c_payment_cnt + 1
		WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = out_c_id
		RETURNING c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since,
			c_credit, c_credit_lim, c_discount, c_balance, c_data INTO STRICT v_c;
	out_c_credit := v_c.c_credit;
	out_c_balance := v_c.c_balance;
	out_c_data := '';
	IF v_c.c_credit = 'BC' THEN
		-- The payment's line at the left of C_DATA, cut at 500 characters (§2.5.2.2), in
		-- cDataPrefix's format.
		v_data := substr(format('| %4s %2s %4s %2s %4s $%7s ', out_c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id,
			p_amount::numeric(6,2)) || v_c.c_data, 1, 500);
		UPDATE customer SET c_data = v_data WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = out_c_id;
		out_c_data := substr(v_data, 1, 200);
	END IF;
	INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
		VALUES (out_c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id, p_h_date, p_amount, v_w.w_name || '    ' || v_d.d_name);
	COMMIT;
END $$`,

	`CREATE OR REPLACE PROCEDURE tpcc_order_status(p_w_id integer, p_d_id integer, p_by_name integer, p_c_id integer,
	p_c_last varchar, INOUT out_c_id integer, INOUT out_c_balance numeric, INOUT out_o_id integer,
	INOUT out_o_carrier_id integer, INOUT out_lines integer)
LANGUAGE plpgsql AS $$
-- ` + procMarker + `: Order-Status (§2.6.2.2), read-only under a snapshot.
DECLARE
	v_n integer; v_c record; v_entry timestamp; v_l record;
BEGIN
	COMMIT;
	SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY;
	IF p_by_name = 1 THEN
		SELECT count(*) INTO v_n FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = p_c_last;
		IF v_n = 0 THEN
			RAISE EXCEPTION 'tpcc: no customer named % in district %/%', p_c_last, p_w_id, p_d_id;
		END IF;
		SELECT c_id, c_balance, c_first, c_middle, c_last INTO v_c FROM customer
			WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = p_c_last
			ORDER BY c_first, c_id OFFSET (v_n - 1) / 2 LIMIT 1;
		out_c_id := v_c.c_id;
	ELSE
		SELECT c_balance, c_first, c_middle, c_last INTO STRICT v_c FROM customer
			WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = p_c_id;
		out_c_id := p_c_id;
	END IF;
	out_c_balance := v_c.c_balance;
	SELECT o_id, o_entry_d, o_carrier_id INTO STRICT out_o_id, v_entry, out_o_carrier_id FROM orders
		WHERE o_w_id = p_w_id AND o_d_id = p_d_id AND o_c_id = out_c_id ORDER BY o_id DESC LIMIT 1;
	out_lines := 0;
	FOR v_l IN SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line
		WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id = out_o_id LOOP
		out_lines := out_lines + 1;
	END LOOP;
	COMMIT;
END $$`,

	`CREATE OR REPLACE PROCEDURE tpcc_delivery(p_w_id integer, p_carrier_id integer, p_delivery_d timestamp,
	INOUT out_skipped integer, INOUT out_delivered varchar)
LANGUAGE plpgsql AS $$
-- ` + procMarker + `: Delivery (§2.7.4.2), all ten districts in one transaction.
DECLARE
	v_d integer; v_o integer; v_c integer; v_n integer; v_sum numeric;
BEGIN
	COMMIT;
	SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
	out_skipped := 0;
	out_delivered := '';
	FOR v_d IN 1 .. 10 LOOP
		-- The oldest NEW-ORDER row, locked as it is read, district after district as in
		-- the other modes (dlOldestLockedSQL): a Delivery that waited for it gets the next
		-- oldest, and the DELETE finds it.
		SELECT no_o_id INTO v_o FROM new_order WHERE no_w_id = p_w_id AND no_d_id = v_d
			ORDER BY no_o_id LIMIT 1 FOR UPDATE;
		IF NOT FOUND THEN
			out_skipped := out_skipped + 1;
			out_delivered := out_delivered || ' 0';
			CONTINUE;
		END IF;
		DELETE FROM new_order WHERE no_w_id = p_w_id AND no_d_id = v_d AND no_o_id = v_o;
		GET DIAGNOSTICS v_n = ROW_COUNT;
		IF v_n <> 1 THEN
			RAISE EXCEPTION 'tpcc: delivery: new order %/%/% not found', p_w_id, v_d, v_o;
		END IF;
		UPDATE orders SET o_carrier_id = p_carrier_id WHERE o_w_id = p_w_id AND o_d_id = v_d AND o_id = v_o
			RETURNING o_c_id INTO STRICT v_c;
		UPDATE order_line SET ol_delivery_d = p_delivery_d WHERE ol_w_id = p_w_id AND ol_d_id = v_d AND ol_o_id = v_o;
		GET DIAGNOSTICS v_n = ROW_COUNT;
		IF v_n = 0 THEN
			RAISE EXCEPTION 'tpcc: delivered order %/%/% has no lines', p_w_id, v_d, v_o;
		END IF;
		SELECT sum(ol_amount) INTO v_sum FROM order_line WHERE ol_w_id = p_w_id AND ol_d_id = v_d AND ol_o_id = v_o;
		UPDATE customer SET c_balance = c_balance + v_sum, c_delivery_cnt = c_delivery_cnt + 1
			WHERE c_w_id = p_w_id AND c_d_id = v_d AND c_id = v_c;
		GET DIAGNOSTICS v_n = ROW_COUNT;
		IF v_n <> 1 THEN
			RAISE EXCEPTION 'tpcc: customer %/%/% not found', p_w_id, v_d, v_c;
		END IF;
		out_delivered := out_delivered || ' ' || v_o;
	END LOOP;
	COMMIT;
END $$`,

	`CREATE OR REPLACE PROCEDURE tpcc_stock_level(p_w_id integer, p_d_id integer, p_threshold integer,
	INOUT out_low_stock integer)
LANGUAGE plpgsql AS $$
-- ` + procMarker + `: Stock-Level (§2.8.2.2), read-only under a snapshot.
DECLARE
	v_next integer;
BEGIN
	COMMIT;
	SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY;
	SELECT d_next_o_id INTO STRICT v_next FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;
	SELECT count(DISTINCT s_i_id) INTO out_low_stock FROM order_line, stock
		WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id < v_next AND ol_o_id >= v_next - 20
		AND s_w_id = p_w_id AND s_i_id = ol_i_id AND s_quantity < p_threshold;
	COMMIT;
END $$`,
}
