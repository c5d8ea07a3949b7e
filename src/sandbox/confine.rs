//! The program's own confinement, built by the supervisor before the fork and applied by
//! the program's process before its exec: Landlock (writes only below the writable roots,
//! the private temporary directory and `/dev`; reads anywhere) where the kernel has it,
//! and a seccomp filter that refuses what could undo the sandbox or reach past it.

use std::collections::BTreeMap;
use std::io;
use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreated,
    RulesetCreatedAttr,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use super::Spec;

/// The newest Landlock ABI we ask for; older kernels give what they have (best effort).
const LANDLOCK: ABI = ABI::V5;

/// Sets what `program`'s process does before its exec.
pub(super) fn before_exec(spec: &Spec, program: &mut std::process::Command) -> io::Result<()> {
    let mut writable = vec![spec.tmp.clone()];
    if !spec.whole_read_only {
        writable.extend(spec.writable.iter().cloned());
    }
    let mut ruleset = Some(landlock(&writable)?);
    let denied = filter(denied_calls(!spec.network), SeccompAction::Errno(libc::EPERM as u32))?;
    // clone3 takes its flags in a struct a filter cannot read: "not implemented" makes the
    // C library fall back to clone, whose flags it can.
    let clone3 = filter(
        BTreeMap::from([(libc::SYS_clone3, Vec::new())]),
        SeccompAction::Errno(libc::ENOSYS as u32),
    )?;
    crate::sys::sandbox::before_exec(program, move || {
        if let Some(ruleset) = ruleset.take() {
            ruleset.restrict_self().map_err(io::Error::other)?;
        }
        seccompiler::apply_filter(&denied).map_err(io::Error::other)?;
        seccompiler::apply_filter(&clone3).map_err(io::Error::other)?;
        Ok(())
    });
    Ok(())
}

/// A Landlock ruleset: reading and running anywhere, writing below `writable` and `/dev`.
fn landlock(writable: &[PathBuf]) -> io::Result<RulesetCreated> {
    let all = AccessFs::from_all(LANDLOCK);
    let mut ruleset =
        Ruleset::default().handle_access(all).and_then(|r| r.create()).map_err(io::Error::other)?;
    let read = AccessFs::from_read(LANDLOCK);
    ruleset = ruleset
        .add_rule(PathBeneath::new(PathFd::new("/").map_err(io::Error::other)?, read))
        .map_err(io::Error::other)?;
    let device = AccessFs::WriteFile | AccessFs::IoctlDev | AccessFs::Truncate | read;
    ruleset = ruleset
        .add_rule(PathBeneath::new(PathFd::new("/dev").map_err(io::Error::other)?, device))
        .map_err(io::Error::other)?;
    for root in writable {
        let fd = PathFd::new(root).map_err(io::Error::other)?;
        ruleset = ruleset.add_rule(PathBeneath::new(fd, all)).map_err(io::Error::other)?;
    }
    Ok(ruleset)
}

/// The calls a sandboxed program may not make, each refused with EPERM: the mount table,
/// other namespaces (and a new user namespace, by `unshare` or `clone`), the kernel's
/// keyrings (they can hold credentials), handles that open files by number, and the calls
/// that load code into the kernel. A `sealed` program also makes no VM socket (the network
/// namespace does not hold them). Unix sockets stay: terraform's providers speak to it
/// through one in `TMPDIR`; the socket files of other programs are out of sight instead
/// (`/tmp` is emptied and `/run` hidden: `mounts.rs`).
fn denied_calls(sealed: bool) -> BTreeMap<i64, Vec<SeccompRule>> {
    let mut calls: BTreeMap<i64, Vec<SeccompRule>> = [
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_chroot,
        libc::SYS_move_mount,
        libc::SYS_open_tree,
        libc::SYS_fsopen,
        libc::SYS_fsmount,
        libc::SYS_fsconfig,
        libc::SYS_fspick,
        libc::SYS_mount_setattr,
        libc::SYS_setns,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_userfaultfd,
        libc::SYS_open_by_handle_at,
        libc::SYS_name_to_handle_at,
        libc::SYS_kexec_load,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_reboot,
    ]
    .into_iter()
    .map(|call| (call, Vec::new()))
    .collect();
    let new_user = libc::CLONE_NEWUSER as u64;
    for call in [libc::SYS_unshare, libc::SYS_clone] {
        let rule = SeccompCondition::new(
            0,
            SeccompCmpArgLen::Qword,
            SeccompCmpOp::MaskedEq(new_user),
            new_user,
        )
        .and_then(|c| SeccompRule::new(vec![c]));
        if let Ok(rule) = rule {
            calls.insert(call, vec![rule]);
        }
    }
    if sealed {
        let vsock = libc::AF_VSOCK as u64;
        let rule = SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, vsock)
            .and_then(|c| SeccompRule::new(vec![c]));
        calls.insert(libc::SYS_socket, rule.into_iter().collect());
    }
    calls
}

/// Compiles one filter: `rules` get `action`, everything else is allowed.
fn filter(rules: BTreeMap<i64, Vec<SeccompRule>>, action: SeccompAction) -> io::Result<BpfProgram> {
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(io::Error::other)?;
    let filter =
        SeccompFilter::new(rules, SeccompAction::Allow, action, arch).map_err(io::Error::other)?;
    BpfProgram::try_from(filter).map_err(io::Error::other)
}
