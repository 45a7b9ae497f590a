// mysql2 in dblat's client matrix: --mode query (the text protocol, values interpolated by
// the client) or --mode execute (prepared statements, prepared on first use and cached per
// connection: COM_STMT_PREPARE once, COM_STMT_EXECUTE after). beginTransaction sends START
// TRANSACTION. TLS is off unless asked for. The password comes from the MySQL option file
// --option-file names.
'use strict';
const mysql = require('mysql2/promise');
const common = require('./common');

common.main('mysql2 ' + require('mysql2/package.json').version, async (a) => {
  const c = await mysql.createConnection({ host: a.host, port: a.port, database: a.db, user: a.user,
    password: common.optionPassword(a['option-file']) });
  const run = a.mode === 'execute' ? (s, p) => c.execute(s, p) : (s, p) => c.query(s, p);
  return {
    async tx(id) {
      await c.beginTransaction();
      const [rows] = await run(common.SELECT + '?', [id]);
      if (rows.length !== 1) throw new Error('no row ' + id);
      await run(common.UPDATE + '?', [id]);
      await c.commit();
    },
    close: () => c.end(),
  };
}).catch((e) => { console.error(e); process.exit(1); });
