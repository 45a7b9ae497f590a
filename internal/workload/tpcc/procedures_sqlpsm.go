package tpcc

import (
	"strings"

	"github.com/dblat/dblat/internal/engine"
)

// The TPC-C procedures in MariaDB's SQL/PSM dialect (10.3+; see procedures.go for the
// contract), as HammerDB writes them for MySQL and MariaDB.
//
// Each procedure sets the isolation of its transaction and runs START TRANSACTION ...
// COMMIT itself, and returns its results as a one-row result set, which the client reads
// in the same round trip as the call (a prepared CALL: COM_STMT_EXECUTE). Any SQL error
// rolls the transaction back (EXIT HANDLER ... ROLLBACK; RESIGNAL) before the client sees
// it; a row that must exist and does not is reported with SIGNAL, since a SELECT ... INTO
// that finds nothing is only a warning in SQL/PSM. MariaDB has no UPDATE ... RETURNING:
// an updated row is read back with a SELECT, as in the client mode.
func init() {
	registerProcLanguage("sql/psm", &procLanguage{
		commits: true,
		install: func(engine.Dialect) []string {
			var q []string
			for i, n := range procNames {
				q = append(q, "DROP PROCEDURE IF EXISTS "+n, sqlpsmProcedures[i])
			}
			return q
		},
		drop: func() []string {
			var q []string
			for _, n := range procNames {
				q = append(q, "DROP PROCEDURE IF EXISTS "+n)
			}
			return q
		}(),
		installed: `SELECT COUNT(*) FROM information_schema.routines WHERE routine_schema = DATABASE()
			AND routine_type = 'PROCEDURE' AND routine_name IN ('` + strings.Join(procNames[:], "', '") + `')
			AND routine_definition LIKE '%` + procMarker + `%'`,
		call: func(name string, args, _ int) string { return "CALL " + name + "(" + placeholders(args) + ")" },
	})
}

// sqlpsmPad is expr right-aligned in width characters, never cut (like fmt's %4d).
func sqlpsmPad(expr, width string) string {
	return "LPAD(" + expr + ", GREATEST(" + width + ", CHAR_LENGTH(" + expr + ")), ' ')"
}

var sqlpsmProcedures = [numTxTypes]string{
	`CREATE PROCEDURE tpcc_new_order(IN p_w_id INT, IN p_d_id INT, IN p_c_id INT, IN p_ol_cnt INT,
	IN p_all_local INT, IN p_lines VARCHAR(240), IN p_entry_d DATETIME(6))
proc: BEGIN
	-- ` + procMarker + `: New-Order (§2.4.2.2), lines in processing order (encodeLines).
	DECLARE v_w_tax, v_d_tax, v_c_discount DECIMAL(4,4);
	DECLARE v_next, v_o_id, k, v_i, v_sw, v_qty, v_num, v_squant, v_n INT;
	DECLARE v_nf, v_rolled_back INT DEFAULT 0;
	DECLARE v_c_last VARCHAR(16);
	DECLARE v_c_credit CHAR(2);
	DECLARE v_price DECIMAL(5,2);
	DECLARE v_name VARCHAR(24);
	DECLARE v_idata, v_sdata VARCHAR(50);
	DECLARE v_sdist CHAR(24);
	DECLARE v_amount DECIMAL(6,2);
	DECLARE v_sum DECIMAL(12,2) DEFAULT 0;
	DECLARE v_brands VARCHAR(15);
	DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_nf = 1;
	DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
	SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
	START TRANSACTION;
	SELECT w_tax INTO v_w_tax FROM warehouse WHERE w_id = p_w_id;
	IF v_nf THEN
		SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'tpcc: warehouse not found';
	END IF;
	UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = p_w_id AND d_id = p_d_id;
	IF ROW_COUNT() <> 1 THEN
		SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'tpcc: district not found';
	END IF;
	SELECT d_tax, d_next_o_id INTO v_d_tax, v_next FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;
	SET v_o_id = v_next - 1;
	SELECT c_discount, c_last, c_credit INTO v_c_discount, v_c_last, v_c_credit
		FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = p_c_id;
	IF v_nf THEN
		SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'tpcc: customer not found';
	END IF;
	INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
		VALUES (v_o_id, p_d_id, p_w_id, p_c_id, p_entry_d, NULL, p_ol_cnt, p_all_local);
	INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (v_o_id, p_d_id, p_w_id);
	SET v_brands = REPEAT(' ', p_ol_cnt);
	SET k = 0;
	line_loop: WHILE k < p_ol_cnt DO
		SET v_i = CAST(SUBSTRING(p_lines, k * 16 + 1, 6) AS SIGNED);
		SET v_sw = CAST(SUBSTRING(p_lines, k * 16 + 7, 6) AS SIGNED);
		SET v_qty = CAST(SUBSTRING(p_lines, k * 16 + 13, 2) AS SIGNED);
		SET v_num = CAST(SUBSTRING(p_lines, k * 16 + 15, 2) AS SIGNED);
		SELECT i_price, i_name, i_data INTO v_price, v_name, v_idata FROM item WHERE i_id = v_i;
		IF v_nf THEN
			-- "Item number is not valid" (§2.4.2.3): the valid items, sorted before it, are done.
			ROLLBACK;
			SET v_rolled_back = 1;
			LEAVE line_loop;
		END IF;
		UPDATE stock SET s_quantity = CASE WHEN s_quantity >= v_qty + 10 THEN s_quantity - v_qty ELSE s_quantity - v_qty + 91 END,
			s_ytd = s_ytd + v_qty, s_order_cnt = s_order_cnt + 1,
			s_remote_cnt = s_remote_cnt + CASE WHEN v_sw <> p_w_id THEN 1 ELSE 0 END
			WHERE s_i_id = v_i AND s_w_id = v_sw;
		IF ROW_COUNT() <> 1 THEN
			SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'tpcc: stock not found';
		END IF;
		SELECT s_quantity, ` + sDistCase("p_d_id") + `, s_data INTO v_squant, v_sdist, v_sdata
			FROM stock WHERE s_i_id = v_i AND s_w_id = v_sw;
		SET v_amount = v_qty * v_price;
		SET v_sum = v_sum + v_amount;
		SET v_brands = INSERT(v_brands, v_num, 1,
			IF(LOCATE('ORIGINAL', v_idata) > 0 AND LOCATE('ORIGINAL', v_sdata) > 0, 'B', 'G'));
		INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
			VALUES (v_o_id, p_d_id, p_w_id, v_num, v_i, v_sw, NULL, v_qty, v_amount, v_sdist);
		SET k = k + 1;
	END WHILE line_loop;
	IF v_rolled_back = 0 THEN
		COMMIT;
	END IF;
	SELECT v_o_id, v_c_last, v_c_credit, v_c_discount, v_w_tax, v_d_tax, v_sum, v_brands, v_rolled_back;
END proc`,

	`CREATE PROCEDURE tpcc_payment(IN p_w_id INT, IN p_d_id INT, IN p_c_w_id INT, IN p_c_d_id INT,
	IN p_by_name INT, IN p_c_id INT, IN p_c_last VARCHAR(16), IN p_amount DECIMAL(6,2), IN p_h_date DATETIME(6))
proc: BEGIN
	-- ` + procMarker + `: Payment (§2.5.2.2).
	DECLARE v_nf INT DEFAULT 0;
	DECLARE v_n, v_c_id INT;
	DECLARE v_w_name, v_d_name VARCHAR(10);
	DECLARE v_street_1, v_street_2, v_city VARCHAR(20);
	DECLARE v_state CHAR(2);
	DECLARE v_zip CHAR(9);
	DECLARE v_first, v_last VARCHAR(16);
	DECLARE v_middle, v_credit CHAR(2);
	DECLARE v_phone CHAR(16);
	DECLARE v_since DATETIME(6);
	DECLARE v_credit_lim, v_balance DECIMAL(12,2);
	DECLARE v_discount DECIMAL(4,4);
	DECLARE v_data VARCHAR(500);
	DECLARE v_out_data VARCHAR(200) DEFAULT '';
	DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_nf = 1;
	DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
	SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
	START TRANSACTION;
	UPDATE warehouse SET w_ytd = w_ytd + p_amount WHERE w_id = p_w_id;
	IF ROW_COUNT() <> 1 THEN
		SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'tpcc: warehouse not found';
	END IF;
	SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip INTO v_w_name, v_street_1, v_street_2, v_city, v_state, v_zip
		FROM warehouse WHERE w_id = p_w_id;
	UPDATE district SET d_ytd = d_ytd + p_amount WHERE d_w_id = p_w_id AND d_id = p_d_id;
	IF ROW_COUNT() <> 1 THEN
		SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'tpcc: district not found';
	END IF;
	SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip INTO v_d_name, v_street_1, v_street_2, v_city, v_state, v_zip
		FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;
	IF p_by_name = 1 THEN
		SELECT COUNT(*) INTO v_n FROM customer WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_last = p_c_last;
		IF v_n = 0 THEN
			SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'tpcc: no customer of that name';
		END IF;
		-- Position ⌈n/2⌉ sorted by C_FIRST (§2.5.2.2), C_ID breaking ties.
		SET v_n = (v_n - 1) DIV 2;
		SELECT c_id INTO v_c_id FROM customer WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_last = p_c_last
			ORDER BY c_first, c_id LIMIT v_n, 1;
	ELSE
		SET v_c_id = p_c_id;
	END IF;
	UPDATE customer SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount,
		c_payment_cnt = c_payment_cnt + 1
		WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id;
	IF ROW_COUNT() <> 1 THEN
		SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'tpcc: customer not found';
	END IF;
	SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since,
		c_credit, c_credit_lim, c_discount, c_balance, c_data
		INTO v_first, v_middle, v_last, v_street_1, v_street_2, v_city, v_state, v_zip, v_phone, v_since,
		v_credit, v_credit_lim, v_discount, v_balance, v_data
		FROM customer WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id;
	IF v_credit = 'BC' THEN
		-- The payment's line at the left of C_DATA, cut at 500 characters (§2.5.2.2), in
		-- cDataPrefix's format.
		SET v_data = SUBSTRING(CONCAT('| ', ` + sqlpsmPad("v_c_id", "4") + `, ' ', ` + sqlpsmPad("p_c_d_id", "2") + `, ' ',
			` + sqlpsmPad("p_c_w_id", "4") + `, ' ', ` + sqlpsmPad("p_d_id", "2") + `, ' ', ` + sqlpsmPad("p_w_id", "4") + `, ' $',
			` + sqlpsmPad("CAST(p_amount AS CHAR)", "7") + `, ' ', v_data) FROM 1 FOR 500);
		UPDATE customer SET c_data = v_data WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id;
		SET v_out_data = SUBSTRING(v_data FROM 1 FOR 200);
	END IF;
	INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
		VALUES (v_c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id, p_h_date, p_amount, CONCAT(v_w_name, '    ', v_d_name));
	COMMIT;
	SELECT v_c_id, v_balance, v_credit, v_out_data;
END proc`,

	`CREATE PROCEDURE tpcc_order_status(IN p_w_id INT, IN p_d_id INT, IN p_by_name INT, IN p_c_id INT,
	IN p_c_last VARCHAR(16))
proc: BEGIN
	-- ` + procMarker + `: Order-Status (§2.6.2.2), read-only under a snapshot.
	DECLARE v_nf INT DEFAULT 0;
	DECLARE v_n, v_c_id, v_o_id, v_carrier INT;
	DECLARE v_lines INT DEFAULT 0;
	DECLARE v_balance DECIMAL(12,2);
	DECLARE v_first, v_last VARCHAR(16);
	DECLARE v_middle CHAR(2);
	DECLARE v_entry DATETIME(6);
	DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_nf = 1;
	DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
	SET TRANSACTION ISOLATION LEVEL REPEATABLE READ;
	START TRANSACTION READ ONLY;
	IF p_by_name = 1 THEN
		SELECT COUNT(*) INTO v_n FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = p_c_last;
		IF v_n = 0 THEN
			SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'tpcc: no customer of that name';
		END IF;
		SET v_n = (v_n - 1) DIV 2;
		SELECT c_id, c_balance, c_first, c_middle, c_last INTO v_c_id, v_balance, v_first, v_middle, v_last
			FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = p_c_last
			ORDER BY c_first, c_id LIMIT v_n, 1;
	ELSE
		SET v_c_id = p_c_id;
		SELECT c_balance, c_first, c_middle, c_last INTO v_balance, v_first, v_middle, v_last
			FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = p_c_id;
		IF v_nf THEN
			SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'tpcc: customer not found';
		END IF;
	END IF;
	SELECT o_id, o_entry_d, o_carrier_id INTO v_o_id, v_entry, v_carrier FROM orders
		WHERE o_w_id = p_w_id AND o_d_id = p_d_id AND o_c_id = v_c_id ORDER BY o_id DESC LIMIT 1;
	IF v_nf THEN
		SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'tpcc: order not found';
	END IF;
	FOR l IN (SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line
		WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id = v_o_id) DO
		SET v_lines = v_lines + 1;
	END FOR;
	COMMIT;
	SELECT v_c_id, v_balance, v_o_id, v_carrier, v_lines;
END proc`,

	`CREATE PROCEDURE tpcc_delivery(IN p_w_id INT, IN p_carrier_id INT, IN p_delivery_d DATETIME(6))
proc: BEGIN
	-- ` + procMarker + `: Delivery (§2.7.4.2), all ten districts in one transaction.
	DECLARE v_d, v_o, v_c INT;
	DECLARE v_skipped INT DEFAULT 0;
	DECLARE v_sum DECIMAL(12,2);
	DECLARE v_delivered VARCHAR(200) DEFAULT '';
	DECLARE v_nf INT DEFAULT 0;
	DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_nf = 1;
	DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
	SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
	START TRANSACTION;
	SET v_d = 1;
	WHILE v_d <= 10 DO
		-- The oldest NEW-ORDER row, locked as it is read, district after district as in
		-- the other modes (dlOldestLockedSQL): a Delivery that waited for it gets the next
		-- oldest, and the DELETE finds it. A SELECT ... INTO that finds no row leaves v_o
		-- alone and raises NOT FOUND, which sets v_nf.
		SET v_nf = 0;
		SELECT no_o_id INTO v_o FROM new_order WHERE no_w_id = p_w_id AND no_d_id = v_d
			ORDER BY no_o_id LIMIT 1 FOR UPDATE;
		IF v_nf THEN
			SET v_skipped = v_skipped + 1;
			SET v_delivered = CONCAT(v_delivered, ' 0');
		ELSE
			DELETE FROM new_order WHERE no_w_id = p_w_id AND no_d_id = v_d AND no_o_id = v_o;
			IF ROW_COUNT() <> 1 THEN
				SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'tpcc: delivery: new order not found';
			END IF;
			UPDATE orders SET o_carrier_id = p_carrier_id WHERE o_w_id = p_w_id AND o_d_id = v_d AND o_id = v_o;
			IF ROW_COUNT() <> 1 THEN
				SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'tpcc: order not found';
			END IF;
			SELECT o_c_id INTO v_c FROM orders WHERE o_w_id = p_w_id AND o_d_id = v_d AND o_id = v_o;
			UPDATE order_line SET ol_delivery_d = p_delivery_d WHERE ol_w_id = p_w_id AND ol_d_id = v_d AND ol_o_id = v_o;
			IF ROW_COUNT() = 0 THEN
				SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'tpcc: delivered order has no lines';
			END IF;
			SELECT SUM(ol_amount) INTO v_sum FROM order_line WHERE ol_w_id = p_w_id AND ol_d_id = v_d AND ol_o_id = v_o;
			UPDATE customer SET c_balance = c_balance + v_sum, c_delivery_cnt = c_delivery_cnt + 1
				WHERE c_w_id = p_w_id AND c_d_id = v_d AND c_id = v_c;
			IF ROW_COUNT() <> 1 THEN
				SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'tpcc: customer not found';
			END IF;
			SET v_delivered = CONCAT(v_delivered, ' ', v_o);
		END IF;
		SET v_d = v_d + 1;
	END WHILE;
	COMMIT;
	SELECT v_skipped, v_delivered;
END proc`,

	`CREATE PROCEDURE tpcc_stock_level(IN p_w_id INT, IN p_d_id INT, IN p_threshold INT)
proc: BEGIN
	-- ` + procMarker + `: Stock-Level (§2.8.2.2), read-only under a snapshot.
	DECLARE v_next, v_low INT;
	DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
	SET TRANSACTION ISOLATION LEVEL REPEATABLE READ;
	START TRANSACTION READ ONLY;
	SELECT d_next_o_id INTO v_next FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;
	IF v_next IS NULL THEN
		SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'tpcc: district not found';
	END IF;
	SELECT COUNT(DISTINCT s_i_id) INTO v_low FROM order_line, stock
		WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id < v_next AND ol_o_id >= v_next - 20
		AND s_w_id = p_w_id AND s_i_id = ol_i_id AND s_quantity < p_threshold;
	COMMIT;
	SELECT v_low;
END proc`,
}
