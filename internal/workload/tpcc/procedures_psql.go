package tpcc

import (
	"strings"

	"github.com/dblat/dblat/internal/engine"
)

// The TPC-C procedures in Firebird's PSQL (3.0+; see procedures.go for the contract).
//
// PSQL cannot COMMIT or ROLLBACK: the client begins the transaction, with the isolation
// of the other modes, executes the procedure (EXECUTE PROCEDURE, which returns the output
// parameters as one row in a single op_execute2 exchange), and commits, or rolls back when
// New-Order reports its unused item (the procedure has done the valid items' work by
// then, §2.4.2.3). An error inside a procedure undoes its work (the statement's savepoint)
// and reaches the client, which rolls back. A row that must exist and does not raises the
// exception TPCC_ERROR, installed with the procedures. A singleton SELECT or an UPDATE ...
// RETURNING INTO that finds no row leaves its variables alone, so one of them (a NOT NULL
// column) is set to NULL before and tested after; ROW_COUNT is tested only after plain
// UPDATE and DELETE, since after a singleton SELECT it was once seen at 0 for a row that
// exists, under concurrent updates. Identifiers are unquoted, so stored upper-case.
func init() {
	registerProcLanguage("psql", &procLanguage{
		commits: false,
		install: func(engine.Dialect) []string {
			return append([]string{"CREATE OR ALTER EXCEPTION tpcc_error 'tpcc: row not found'"}, psqlProcedures[:]...)
		},
		drop: func() []string {
			var q []string
			for _, n := range procNames {
				q = append(q, psqlDropIfExists("PROCEDURE", "RDB$PROCEDURES", "RDB$PROCEDURE_NAME", n))
			}
			return append(q, psqlDropIfExists("EXCEPTION", "RDB$EXCEPTIONS", "RDB$EXCEPTION_NAME", "tpcc_error"))
		}(),
		installed: `SELECT COUNT(*) FROM RDB$PROCEDURES WHERE RDB$PROCEDURE_NAME IN ('` +
			strings.ToUpper(strings.Join(procNames[:], "', '")) + `') AND RDB$PROCEDURE_SOURCE CONTAINING '` + procMarker + `'`,
		call: func(name string, args, _ int) string {
			return "EXECUTE PROCEDURE " + name + "(" + placeholders(args) + ")"
		},
	})
}

// psqlDropIfExists drops the object kind name, listed in the system table, if it exists.
func psqlDropIfExists(kind, table, column, name string) string {
	n := strings.ToUpper(name)
	return "EXECUTE BLOCK AS BEGIN IF (EXISTS(SELECT 1 FROM " + table + " WHERE " + column + " = '" + n + "')) THEN " +
		"EXECUTE STATEMENT 'DROP " + kind + " " + n + "'; END"
}

// psqlPad is the integer or text expression expr right-aligned in width characters, never
// cut (like fmt's %4d).
func psqlPad(expr string, width string) string {
	s := "CAST(" + expr + " AS VARCHAR(20))"
	return "LPAD(" + s + ", MAXVALUE(" + width + ", CHAR_LENGTH(" + s + ")))"
}

var psqlProcedures = [numTxTypes]string{
	`CREATE OR ALTER PROCEDURE tpcc_new_order (p_w_id INTEGER, p_d_id INTEGER, p_c_id INTEGER, p_ol_cnt INTEGER,
	p_all_local INTEGER, p_lines VARCHAR(240), p_entry_d TIMESTAMP)
RETURNS (out_o_id INTEGER, out_c_last VARCHAR(16), out_c_credit CHAR(2), out_c_discount NUMERIC(4,4),
	out_w_tax NUMERIC(4,4), out_d_tax NUMERIC(4,4), out_amount_sum NUMERIC(18,2), out_brands VARCHAR(15),
	out_rolled_back INTEGER)
AS
DECLARE v_next INTEGER; DECLARE k INTEGER; DECLARE v_i INTEGER; DECLARE v_sw INTEGER; DECLARE v_qty INTEGER;
DECLARE v_num INTEGER; DECLARE v_price NUMERIC(5,2); DECLARE v_name VARCHAR(24); DECLARE v_idata VARCHAR(50);
DECLARE v_squant INTEGER; DECLARE v_sdist CHAR(24); DECLARE v_sdata VARCHAR(50); DECLARE v_amount NUMERIC(6,2);
BEGIN
	/* ` + procMarker + `: New-Order (§2.4.2.2), lines in processing order (encodeLines). */
	out_w_tax = NULL;
	SELECT w_tax FROM warehouse WHERE w_id = :p_w_id INTO :out_w_tax;
	IF (out_w_tax IS NULL) THEN EXCEPTION tpcc_error 'tpcc: warehouse not found';
	v_next = NULL;
	UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = :p_w_id AND d_id = :p_d_id
		RETURNING d_tax, d_next_o_id INTO :out_d_tax, :v_next;
	IF (v_next IS NULL) THEN EXCEPTION tpcc_error 'tpcc: district not found';
	out_o_id = v_next - 1;
	out_c_last = NULL;
	SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = :p_w_id AND c_d_id = :p_d_id AND c_id = :p_c_id
		INTO :out_c_discount, :out_c_last, :out_c_credit;
	IF (out_c_last IS NULL) THEN EXCEPTION tpcc_error 'tpcc: customer not found';
	INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
		VALUES (:out_o_id, :p_d_id, :p_w_id, :p_c_id, :p_entry_d, NULL, :p_ol_cnt, :p_all_local);
	INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (:out_o_id, :p_d_id, :p_w_id);
	out_amount_sum = 0;
	out_brands = LPAD('', p_ol_cnt);
	out_rolled_back = 0;
	k = 0;
	WHILE (k < p_ol_cnt) DO
	BEGIN
		v_i = CAST(SUBSTRING(p_lines FROM k * 16 + 1 FOR 6) AS INTEGER);
		v_sw = CAST(SUBSTRING(p_lines FROM k * 16 + 7 FOR 6) AS INTEGER);
		v_qty = CAST(SUBSTRING(p_lines FROM k * 16 + 13 FOR 2) AS INTEGER);
		v_num = CAST(SUBSTRING(p_lines FROM k * 16 + 15 FOR 2) AS INTEGER);
		v_price = NULL;
		SELECT i_price, i_name, i_data FROM item WHERE i_id = :v_i INTO :v_price, :v_name, :v_idata;
		IF (v_price IS NULL) THEN
		BEGIN
			/* "Item number is not valid" (§2.4.2.3): the valid items, sorted before it, are
			   done; the client rolls back. */
			out_rolled_back = 1;
			EXIT;
		END
		v_squant = NULL;
		UPDATE stock SET s_quantity = CASE WHEN s_quantity >= :v_qty + 10 THEN s_quantity - :v_qty ELSE s_quantity - :v_qty + 91 END,
			s_ytd = s_ytd + :v_qty, s_order_cnt = s_order_cnt + 1,
			s_remote_cnt = s_remote_cnt + CASE WHEN :v_sw <> :p_w_id THEN 1 ELSE 0 END
			WHERE s_i_id = :v_i AND s_w_id = :v_sw
			RETURNING s_quantity, ` + sDistCase(":p_d_id") + `, s_data INTO :v_squant, :v_sdist, :v_sdata;
		IF (v_squant IS NULL) THEN EXCEPTION tpcc_error 'tpcc: stock not found';
		v_amount = v_qty * v_price;
		out_amount_sum = out_amount_sum + v_amount;
		IF (POSITION('ORIGINAL' IN v_idata) > 0 AND POSITION('ORIGINAL' IN v_sdata) > 0) THEN
			out_brands = OVERLAY(out_brands PLACING 'B' FROM v_num FOR 1);
		ELSE
			out_brands = OVERLAY(out_brands PLACING 'G' FROM v_num FOR 1);
		INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
			VALUES (:out_o_id, :p_d_id, :p_w_id, :v_num, :v_i, :v_sw, NULL, :v_qty, :v_amount, :v_sdist);
		k = k + 1;
	END
END`,

	`CREATE OR ALTER PROCEDURE tpcc_payment (p_w_id INTEGER, p_d_id INTEGER, p_c_w_id INTEGER, p_c_d_id INTEGER,
	p_by_name INTEGER, p_c_id INTEGER, p_c_last VARCHAR(16), p_amount NUMERIC(6,2), p_h_date TIMESTAMP)
RETURNS (out_c_id INTEGER, out_c_balance NUMERIC(12,2), out_c_credit CHAR(2), out_c_data VARCHAR(200))
AS
DECLARE v_n INTEGER; DECLARE v_w_name VARCHAR(10); DECLARE v_d_name VARCHAR(10); DECLARE v_street_1 VARCHAR(20);
DECLARE v_street_2 VARCHAR(20); DECLARE v_city VARCHAR(20); DECLARE v_state CHAR(2); DECLARE v_zip CHAR(9);
DECLARE v_first VARCHAR(16); DECLARE v_middle CHAR(2); DECLARE v_last VARCHAR(16); DECLARE v_phone CHAR(16);
DECLARE v_since TIMESTAMP; DECLARE v_credit_lim NUMERIC(12,2); DECLARE v_discount NUMERIC(4,4);
DECLARE v_data VARCHAR(500);
BEGIN
	/* ` + procMarker + `: Payment (§2.5.2.2). */
	v_w_name = NULL;
	UPDATE warehouse SET w_ytd = w_ytd + :p_amount WHERE w_id = :p_w_id
		RETURNING w_name, w_street_1, w_street_2, w_city, w_state, w_zip INTO :v_w_name, :v_street_1, :v_street_2, :v_city, :v_state, :v_zip;
	IF (v_w_name IS NULL) THEN EXCEPTION tpcc_error 'tpcc: warehouse not found';
	v_d_name = NULL;
	UPDATE district SET d_ytd = d_ytd + :p_amount WHERE d_w_id = :p_w_id AND d_id = :p_d_id
		RETURNING d_name, d_street_1, d_street_2, d_city, d_state, d_zip INTO :v_d_name, :v_street_1, :v_street_2, :v_city, :v_state, :v_zip;
	IF (v_d_name IS NULL) THEN EXCEPTION tpcc_error 'tpcc: district not found';
	IF (p_by_name = 1) THEN
	BEGIN
		SELECT COUNT(*) FROM customer WHERE c_w_id = :p_c_w_id AND c_d_id = :p_c_d_id AND c_last = :p_c_last INTO :v_n;
		IF (v_n = 0) THEN EXCEPTION tpcc_error 'tpcc: no customer of that name';
		/* Position ⌈n/2⌉ sorted by C_FIRST (§2.5.2.2), C_ID breaking ties. */
		v_n = (v_n - 1) / 2 + 1;
		SELECT c_id FROM customer WHERE c_w_id = :p_c_w_id AND c_d_id = :p_c_d_id AND c_last = :p_c_last
			ORDER BY c_first, c_id ROWS :v_n TO :v_n INTO :out_c_id;
	END
	ELSE
		out_c_id = p_c_id;
	out_c_balance = NULL;
	UPDATE customer SET c_balance = c_balance - :p_amount, c_ytd_payment = c_ytd_payment + :p_amount,
		c_payment_cnt = c_payment_cnt + 1
		WHERE c_w_id = :p_c_w_id AND c_d_id = :p_c_d_id AND c_id = :out_c_id
		RETURNING c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since,
			c_credit, c_credit_lim, c_discount, c_balance, c_data
		INTO :v_first, :v_middle, :v_last, :v_street_1, :v_street_2, :v_city, :v_state, :v_zip, :v_phone, :v_since,
			:out_c_credit, :v_credit_lim, :v_discount, :out_c_balance, :v_data;
	IF (out_c_balance IS NULL) THEN EXCEPTION tpcc_error 'tpcc: customer not found';
	out_c_data = '';
	IF (out_c_credit = 'BC') THEN
	BEGIN
		/* The payment's line at the left of C_DATA, cut at 500 characters (§2.5.2.2), in
		   cDataPrefix's format. */
		v_data = SUBSTRING('| ' || ` + psqlPad("out_c_id", "4") + ` || ' ' || ` + psqlPad("p_c_d_id", "2") + ` || ' ' ||
			` + psqlPad("p_c_w_id", "4") + ` || ' ' || ` + psqlPad("p_d_id", "2") + ` || ' ' || ` + psqlPad("p_w_id", "4") + ` || ' $' ||
			` + psqlPad("p_amount", "7") + ` || ' ' || v_data FROM 1 FOR 500);
		UPDATE customer SET c_data = :v_data WHERE c_w_id = :p_c_w_id AND c_d_id = :p_c_d_id AND c_id = :out_c_id;
		out_c_data = SUBSTRING(v_data FROM 1 FOR 200);
	END
	INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
		VALUES (:out_c_id, :p_c_d_id, :p_c_w_id, :p_d_id, :p_w_id, :p_h_date, :p_amount, :v_w_name || '    ' || :v_d_name);
END`,

	`CREATE OR ALTER PROCEDURE tpcc_order_status (p_w_id INTEGER, p_d_id INTEGER, p_by_name INTEGER, p_c_id INTEGER,
	p_c_last VARCHAR(16))
RETURNS (out_c_id INTEGER, out_c_balance NUMERIC(12,2), out_o_id INTEGER, out_o_carrier_id INTEGER, out_lines INTEGER)
AS
DECLARE v_n INTEGER; DECLARE v_first VARCHAR(16); DECLARE v_middle CHAR(2); DECLARE v_last VARCHAR(16);
DECLARE v_entry TIMESTAMP; DECLARE v_i INTEGER; DECLARE v_sw INTEGER; DECLARE v_qty INTEGER;
DECLARE v_amount NUMERIC(6,2); DECLARE v_delivery TIMESTAMP;
BEGIN
	/* ` + procMarker + `: Order-Status (§2.6.2.2). */
	IF (p_by_name = 1) THEN
	BEGIN
		SELECT COUNT(*) FROM customer WHERE c_w_id = :p_w_id AND c_d_id = :p_d_id AND c_last = :p_c_last INTO :v_n;
		IF (v_n = 0) THEN EXCEPTION tpcc_error 'tpcc: no customer of that name';
		v_n = (v_n - 1) / 2 + 1;
		SELECT c_id, c_balance, c_first, c_middle, c_last FROM customer
			WHERE c_w_id = :p_w_id AND c_d_id = :p_d_id AND c_last = :p_c_last
			ORDER BY c_first, c_id ROWS :v_n TO :v_n INTO :out_c_id, :out_c_balance, :v_first, :v_middle, :v_last;
	END
	ELSE
	BEGIN
		out_c_balance = NULL;
		SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = :p_w_id AND c_d_id = :p_d_id AND c_id = :p_c_id
			INTO :out_c_balance, :v_first, :v_middle, :v_last;
		IF (out_c_balance IS NULL) THEN EXCEPTION tpcc_error 'tpcc: customer not found';
		out_c_id = p_c_id;
	END
	out_o_id = NULL;
	SELECT FIRST 1 o_id, o_entry_d, o_carrier_id FROM orders WHERE o_w_id = :p_w_id AND o_d_id = :p_d_id AND o_c_id = :out_c_id
		ORDER BY o_id DESC INTO :out_o_id, :v_entry, :out_o_carrier_id;
	IF (out_o_id IS NULL) THEN EXCEPTION tpcc_error 'tpcc: order not found';
	out_lines = 0;
	FOR SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line
		WHERE ol_w_id = :p_w_id AND ol_d_id = :p_d_id AND ol_o_id = :out_o_id
		INTO :v_i, :v_sw, :v_qty, :v_amount, :v_delivery DO
		out_lines = out_lines + 1;
END`,

	`CREATE OR ALTER PROCEDURE tpcc_delivery (p_w_id INTEGER, p_carrier_id INTEGER, p_delivery_d TIMESTAMP)
RETURNS (out_skipped INTEGER, out_delivered VARCHAR(200))
AS
DECLARE v_d INTEGER; DECLARE v_o INTEGER; DECLARE v_c INTEGER; DECLARE v_sum NUMERIC(18,2);
BEGIN
	/* ` + procMarker + `: Delivery (§2.7.4.2), all ten districts in one transaction. */
	out_skipped = 0;
	out_delivered = '';
	v_d = 1;
	WHILE (v_d <= 10) DO
	BEGIN
		/* The oldest NEW-ORDER row, locked as it is read, district after district as in
		   the other modes (dlOldestLockedSQL): a Delivery that waited for it gets the next
		   oldest, and the DELETE finds it. */
		v_o = NULL;
		SELECT no_o_id FROM new_order WHERE no_w_id = :p_w_id AND no_d_id = :v_d
			ORDER BY no_o_id ROWS 1 WITH LOCK INTO :v_o;
		IF (v_o IS NULL) THEN
		BEGIN
			out_skipped = out_skipped + 1;
			out_delivered = out_delivered || ' 0';
		END
		ELSE
		BEGIN
			DELETE FROM new_order WHERE no_w_id = :p_w_id AND no_d_id = :v_d AND no_o_id = :v_o;
			IF (ROW_COUNT <> 1) THEN EXCEPTION tpcc_error 'tpcc: delivery: new order not found';
			v_c = NULL;
			UPDATE orders SET o_carrier_id = :p_carrier_id WHERE o_w_id = :p_w_id AND o_d_id = :v_d AND o_id = :v_o
				RETURNING o_c_id INTO :v_c;
			IF (v_c IS NULL) THEN EXCEPTION tpcc_error 'tpcc: order not found';
			UPDATE order_line SET ol_delivery_d = :p_delivery_d WHERE ol_w_id = :p_w_id AND ol_d_id = :v_d AND ol_o_id = :v_o;
			IF (ROW_COUNT = 0) THEN EXCEPTION tpcc_error 'tpcc: delivered order has no lines';
			SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = :p_w_id AND ol_d_id = :v_d AND ol_o_id = :v_o INTO :v_sum;
			UPDATE customer SET c_balance = c_balance + :v_sum, c_delivery_cnt = c_delivery_cnt + 1
				WHERE c_w_id = :p_w_id AND c_d_id = :v_d AND c_id = :v_c;
			IF (ROW_COUNT <> 1) THEN EXCEPTION tpcc_error 'tpcc: customer not found';
			out_delivered = out_delivered || ' ' || v_o;
		END
		v_d = v_d + 1;
	END
END`,

	`CREATE OR ALTER PROCEDURE tpcc_stock_level (p_w_id INTEGER, p_d_id INTEGER, p_threshold INTEGER)
RETURNS (out_low_stock INTEGER)
AS
DECLARE v_next INTEGER;
BEGIN
	/* ` + procMarker + `: Stock-Level (§2.8.2.2). */
	v_next = NULL;
	SELECT d_next_o_id FROM district WHERE d_w_id = :p_w_id AND d_id = :p_d_id INTO :v_next;
	IF (v_next IS NULL) THEN EXCEPTION tpcc_error 'tpcc: district not found';
	SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock
		WHERE ol_w_id = :p_w_id AND ol_d_id = :p_d_id AND ol_o_id < :v_next AND ol_o_id >= :v_next - 20
		AND s_w_id = :p_w_id AND s_i_id = ol_i_id AND s_quantity < :p_threshold INTO :out_low_stock;
END`,
}
