set -e
umount --recursive --lazy /run/netns 2>/dev/null || true
printf '%s' 'node-1' > /proc/sys/kernel/hostname
mount --bind '/lab/nodes/node-1/sysctl/vm.overcommit_memory' '/proc/sys/vm/overcommit_memory'
mount --bind '/lab/nodes/node-1/sysctl/vm.panic_on_oom' '/proc/sys/vm/panic_on_oom'
mount --bind '/lab/nodes/node-1/sysctl/kernel.panic' '/proc/sys/kernel/panic'
mount --bind '/lab/nodes/node-1/sysctl/kernel.panic_on_oops' '/proc/sys/kernel/panic_on_oops'
mount --bind '/lab/nodes/node-1/sysctl/kernel.keys.root_maxkeys' '/proc/sys/kernel/keys/root_maxkeys'
mount --bind '/lab/nodes/node-1/sysctl/kernel.keys.root_maxbytes' '/proc/sys/kernel/keys/root_maxbytes'
mount --bind '/lab/nodes/node-1/host/run' '/run'
mount --bind '/lab/nodes/node-1/host/var-lib' '/var/lib'
mount --bind '/lab/nodes/node-1/host/var-log' '/var/log'
: > '/lab/nodes/node-1/holder.ready'
exec sleep infinity
