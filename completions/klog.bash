# bash completion for the klog tools.
#
# One file serves every tool: `make install` copies it under each tool's
# name, so bash-completion loads it for whichever klog command is completed
# first, and it then registers all of them.
#
# Layout: shared helpers, then one function _klog_<tool> per tool in its own
# block between "# --- klog-<tool> ---" and "# --- end klog-<tool> ---",
# then the `complete` lines, one per tool, at the very end.  To add a tool,
# add its block above the `complete` lines and its own `complete -F` line.

# Complete file names: bash-completion's _filedir when it is loaded, plain
# compgen otherwise.
_klog_files()
{
	if declare -F _filedir >/dev/null; then
		_filedir
	else
		compopt -o filenames 2>/dev/null
		COMPREPLY=( $(compgen -f -- "$1") )
	fi
}

# --- klog-dump ---
_klog_dump()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local opts='-b --base -h --help -J --json -n --count -o --offset
		-P --preview -q --quiet -s --summary -v --verbose --verify
		--deep --allow-partial --version'

	COMPREPLY=()
	case $prev in
	-b|--base|-n|--count|-o|--offset|-P|--preview)
		return 0	# a number
		;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
		return 0
	fi
	# Segment files (*.klog, *.kafka, or any file) and partition
	# directories.
	_klog_files "$cur"
}
# --- end klog-dump ---

# --- klog-group ---
_klog_group()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local cmds='list describe reset delete topics brokers'
	local opts='-f --force -g --group -H --no-header -h --help -J --json
		-n --dry-run --execute -T --timeout -t --topic --to-earliest
		--to-latest --to-offset --to-time --version -Z --zookeeper'
	local w

	COMPREPLY=()
	case $prev in
	-g|--group|-t|--topic|-T|--timeout|--to-offset|--to-time)
		return 0	# a name, a duration, a number or a time
		;;
	-Z|--zookeeper)
		COMPREPLY=( $(compgen -W "localhost:2181" -- "$cur") )
		return 0
		;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
		return 0
	fi
	for w in "${COMP_WORDS[@]:1:COMP_CWORD-1}"; do
		[[ " $cmds " == *" $w "* ]] && return 0	# one command only
	done
	COMPREPLY=( $(compgen -W "$cmds" -- "$cur") )
}
# --- end klog-group ---

complete -F _klog_dump klog-dump
complete -F _klog_group klog-group
