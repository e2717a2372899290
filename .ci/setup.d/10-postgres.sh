# Starts a throwaway PostgreSQL on loopback for the store conformance suites
# (custody and eventlog). Sourced by .ci/run.
if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
	apt_install postgresql
fi
pg_bin=$(dirname "$(ls -d /usr/lib/postgresql/*/bin/initdb | sort -V | tail -n 1)")
pg_data=$work/pgdata
mkdir -p "$pg_data" && chmod 700 "$pg_data"
pg_port=${CHECKFU_CI_PG_PORT:-55432}
mkdir -p "$pg_data"
chown postgres:postgres "$pg_data"
runuser -u postgres -- "$pg_bin/initdb" -D "$pg_data" -A trust -U postgres >/dev/null
runuser -u postgres -- "$pg_bin/pg_ctl" -D "$pg_data" -w -l "$pg_data/server.log" \
	-o "-c listen_addresses=127.0.0.1 -p $pg_port -k $pg_data -c fsync=on -c max_connections=200" start >/dev/null
ci_cleanups+=("runuser -u postgres -- '$pg_bin/pg_ctl' -D '$pg_data' -m fast -w stop >/dev/null")
export CHECKFU_TEST_POSTGRES_DSN="postgres://postgres@127.0.0.1:$pg_port/postgres?sslmode=disable"
echo "postgres ready on 127.0.0.1:$pg_port"
