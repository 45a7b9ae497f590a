// node-postgres (pg, pure JavaScript) in dblat's client matrix: one Client per connection,
// BEGIN and COMMIT as queries, parameters $1 through the extended protocol (an unnamed
// statement each time). TLS is off unless asked for (ssl: false). Without a password in its
// configuration, pg reads it from the pgpass file PGPASSFILE names.
'use strict';
const { Client } = require('pg');
const common = require('./common');

common.main('pg ' + require('pg/package.json').version, async (a) => {
  const c = new Client({ host: a.host, port: a.port, database: a.db, user: a.user, ssl: false });
  await c.connect();
  return {
    async tx(id) {
      await c.query('BEGIN');
      const r = await c.query(common.SELECT + '$1', [id]);
      if (r.rows.length !== 1) throw new Error('no row ' + id);
      await c.query(common.UPDATE + '$1', [id]);
      await c.query('COMMIT');
    },
    close: () => c.end(),
  };
}).catch((e) => { console.error(e); process.exit(1); });
