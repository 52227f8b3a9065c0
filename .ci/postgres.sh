# .ci/postgres.sh — install and start a loopback PostgreSQL for the idem/postgres tests.
#
# Meant to be sourced (". .ci/postgres.sh") by .ci/run, as root, on Debian, with no
# standard input. On success it exports AGENTIDEM_PG_DSN. It is idempotent: a second
# run on the same machine reuses the installed packages and the existing cluster and
# only starts it if it is down. It never changes the caller's shell options.

agentidem_pg_setup() (
	# Every step checks its own status: set -e would be ignored here, since the
	# caller runs this function inside a condition.
	export DEBIAN_FRONTEND=noninteractive
	cluster=agentidem
	db=agentidem
	user=agentidem
	pass=agentidem

	if ! command -v pg_lsclusters >/dev/null 2>&1 || ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
		echo "postgres.sh: installing postgresql from Debian's packages" >&2
		apt-get update -qq </dev/null >&2 || exit 1
		apt-get install -y -qq --no-install-recommends postgresql </dev/null >&2 || exit 1
	fi

	ver=$(ls /usr/lib/postgresql | sort -V | tail -n 1)
	[ -n "$ver" ] || exit 1
	# A cluster of our own, so the packaged "main" cluster (and its port) is left alone.
	if ! pg_lsclusters -h "$ver" "$cluster" >/dev/null 2>&1; then
		# pg_createcluster picks the first free port from 5432 up.
		pg_createcluster "$ver" "$cluster" </dev/null >/dev/null || exit 1
	fi
	# Loopback only; set on every run so a half-configured cluster is repaired.
	conf=/etc/postgresql/$ver/$cluster
	pg_conftool "$ver" "$cluster" remove listen_addresses </dev/null >/dev/null 2>&1
	mkdir -p "$conf/conf.d" || exit 1
	printf "listen_addresses = '127.0.0.1'\nmax_connections = 200\n" >"$conf/conf.d/agentidem.conf" || exit 1
	grep -q "^include_dir = 'conf.d'" "$conf/postgresql.conf" ||
		echo "include_dir = 'conf.d'" >>"$conf/postgresql.conf" || exit 1
	status=$(pg_lsclusters -h "$ver" "$cluster" | awk '{print $4}')
	if [ "$status" != online ]; then
		pg_ctlcluster "$ver" "$cluster" start </dev/null >&2 || exit 1
	fi
	port=$(pg_lsclusters -h "$ver" "$cluster" | awk '{print $3}')
	[ -n "$port" ] || exit 1

	for _ in $(seq 1 50); do
		if su postgres -c "pg_isready -q -h 127.0.0.1 -p $port" </dev/null; then
			break
		fi
		sleep 0.2
	done

	psql_admin() { su postgres -c "psql -w -q -v ON_ERROR_STOP=1 -p $port -d postgres -tA -c \"$1\"" </dev/null; }
	if [ "$(psql_admin "SELECT 1 FROM pg_roles WHERE rolname='$user'")" != 1 ]; then
		psql_admin "CREATE ROLE $user LOGIN PASSWORD '$pass'" >&2 || exit 1
	fi
	if [ "$(psql_admin "SELECT 1 FROM pg_database WHERE datname='$db'")" != 1 ]; then
		psql_admin "CREATE DATABASE $db OWNER $user" >&2 || exit 1
	fi
	echo "postgres://$user:$pass@127.0.0.1:$port/$db?sslmode=disable"
)

if agentidem_pg_dsn=$(agentidem_pg_setup); then
	export AGENTIDEM_PG_DSN="$agentidem_pg_dsn"
	echo "postgres.sh: AGENTIDEM_PG_DSN=$AGENTIDEM_PG_DSN" >&2
else
	echo "postgres.sh: could not set up PostgreSQL; the idem/postgres suite will fail in CI" >&2
fi
unset agentidem_pg_dsn
unset -f agentidem_pg_setup
