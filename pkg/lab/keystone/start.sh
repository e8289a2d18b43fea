#!/usr/bin/env bash
# start.sh DIR setup|accounts: prepare and populate a real Keystone (Debian's python3-keystone
# under uwsgi) on 127.0.0.1. Package keystone embeds it and runs it twice around uwsgi, which it
# starts itself as its own child (so that uwsgi dies with it, even on SIGKILL):
#   setup     writes keystone.conf, the SQLite database, fernet and credential keys and the admin
#             account, and DIR/uwsgi.argv, the command line to serve it (one argument a line);
#   accounts  waits (bounded) for the served Keystone's first token, creates the service user and
#             writes DIR/env (shell syntax) with KEYSTONE_URL, ADMIN_PASSWORD, SERVICE_USER,
#             SERVICE_PASSWORD, SERVICE_PROJECT and SERVICE_USER_ID.
# Everything lives in DIR, logs in DIR/log. The passwords come from KEYSTONE_ADMIN_PASSWORD and
# KEYSTONE_SERVICE_PASSWORD, the same for both phases.
#
# Needs the Debian packages python3-keystone and uwsgi-plugin-python3 (hack/deps.sh), not the
# `keystone` package, whose install starts a server on all interfaces. Choices that matter:
#   - /usr/bin/python3 (Debian's), never a pyenv shim: PATH is reset below;
#   - SQLite in WAL mode after db_sync (else concurrent requests hit "database is locked");
#   - uwsgi with one process and one thread and "Connection: close" (no keep-alive sockets to hang on).
set -euo pipefail
trap 'echo "keystone: start.sh failed at line $LINENO: $BASH_COMMAND" >&2' ERR
dir=${1:?usage: start.sh DIR setup|accounts}
phase=${2:?usage: start.sh DIR setup|accounts}
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
unset PYTHONPATH PYTHONHOME PYENV_VERSION VIRTUAL_ENV || true
for bin in keystone-manage uwsgi curl jq; do
  command -v "$bin" >/dev/null || { echo "keystone: $bin not found (run hack/deps.sh)" >&2; exit 2; }
done
[[ -f /usr/lib/uwsgi/plugins/python3_plugin.so ]] || { echo "keystone: uwsgi-plugin-python3 not installed (run hack/deps.sh)" >&2; exit 2; }
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
if [[ $phase == setup ]]; then
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' >"$dir/port"
fi
port=$(cat "$dir/port")
url="http://127.0.0.1:$port"
admin_pw=${KEYSTONE_ADMIN_PASSWORD:?KEYSTONE_ADMIN_PASSWORD is not set}
svc_user=${KEYSTONE_SERVICE_USER:-k8s-cloud-provider}
svc_pw=${KEYSTONE_SERVICE_PASSWORD:?KEYSTONE_SERVICE_PASSWORD is not set}
svc_project=${KEYSTONE_SERVICE_PROJECT:-kubernetes}

if [[ $phase == setup ]]; then

mkdir -p "$dir/fernet-keys" "$dir/credential-keys" "$dir/log"
cat > "$dir/keystone.conf" <<CONF
[DEFAULT]
log_file = $dir/log/keystone.log
use_stderr = false
[database]
connection = sqlite:///$dir/keystone.db
[token]
provider = fernet
expiration = 3600
[fernet_tokens]
key_repository = $dir/fernet-keys
[credential]
key_repository = $dir/credential-keys
[cache]
enabled = false
CONF
km() { keystone-manage --config-file "$dir/keystone.conf" "$@" >>"$dir/log/manage.log" 2>&1; }
km db_sync
/usr/bin/python3 - "$dir/keystone.db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); print(c.execute("PRAGMA journal_mode=WAL").fetchone()[0], file=sys.stderr); c.close()
PY
km fernet_setup --keystone-user "$(id -un)" --keystone-group "$(id -gn)"
km credential_setup --keystone-user "$(id -un)" --keystone-group "$(id -gn)"
km bootstrap --bootstrap-password "$admin_pw" --bootstrap-username admin --bootstrap-project-name admin \
  --bootstrap-role-name admin --bootstrap-region-id RegionOne \
  --bootstrap-admin-url "$url/v3/" --bootstrap-internal-url "$url/v3/" --bootstrap-public-url "$url/v3/"

# --no-orphans: the worker exits when the master dies, which the package's parent-death signal kills.
printf '%s\n' "$(command -v uwsgi)" --plugin python3 --http-socket "127.0.0.1:$port" \
  --wsgi-file /usr/bin/keystone-wsgi-public --processes 1 --threads 1 --master --die-on-term --no-orphans \
  --add-header "Connection: close" --env "OS_KEYSTONE_CONFIG_FILES=$dir/keystone.conf" \
  --logto "$dir/log/uwsgi.log" >"$dir/uwsgi.argv"
exit 0
fi

# Wait (bounded) for the first token, then create the service user the tests rotate.
auth() { # user password project -> prints the X-Subject-Token
  curl -sS --max-time 60 -o /dev/null -D - -H 'Content-Type: application/json' "$url/v3/auth/tokens" -d "$(jq -n \
    --arg u "$1" --arg p "$2" --arg pr "$3" '{auth:{identity:{methods:["password"],password:{user:{name:$u,domain:{id:"default"},password:$p}}},
    scope:{project:{name:$pr,domain:{id:"default"}}}}}')" | tr -d '\r' | awk -F': ' 'tolower($1)=="x-subject-token"{print $2}'
}
tok=
for _ in $(seq 1 240); do
  tok=$(auth admin "$admin_pw" admin 2>/dev/null || true)
  [[ -n $tok ]] && break
  sleep 0.5
done
if [[ -z $tok ]]; then
  echo "keystone: no token from $url within 2 minutes; see $dir/log" >&2
  tail -n 20 "$dir/log/uwsgi.log" >&2 || true
  exit 1
fi
api() { curl -sS --fail-with-body --retry 3 --retry-all-errors --max-time 60 -H "X-Auth-Token: $tok" -H 'Content-Type: application/json' "$@"; }
proj_id=$(api "$url/v3/projects" -d "$(jq -n --arg n "$svc_project" '{project:{name:$n,domain_id:"default"}}')" | jq -r .project.id)
user_id=$(api "$url/v3/users" -d "$(jq -n --arg n "$svc_user" --arg p "$svc_pw" '{user:{name:$n,domain_id:"default",password:$p}}')" | jq -r .user.id)
role_id=$(api "$url/v3/roles?name=member" | jq -r '.roles[0].id')
api -X PUT "$url/v3/projects/$proj_id/users/$user_id/roles/$role_id" >/dev/null
[[ -n $(auth "$svc_user" "$svc_pw" "$svc_project") ]] || { echo "keystone: service user cannot log in" >&2; exit 1; }

cat > "$dir/env" <<ENV
KEYSTONE_URL=$url/v3
ADMIN_PASSWORD=$admin_pw
SERVICE_USER=$svc_user
SERVICE_USER_ID=$user_id
SERVICE_PASSWORD=$svc_pw
SERVICE_PROJECT=$svc_project
ENV
echo "keystone: ready at $url/v3 (state in $dir)" >&2
