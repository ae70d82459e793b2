//! `tracekit relay`: the relay daemon (crates/relay).

use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct RelayArgs {
    /// Port of consumer daemons' control connections.
    #[arg(long, default_value_t = 5342)]
    pub control_port: u16,
    /// Port of consumer daemons' data connections.
    #[arg(long, default_value_t = 5343)]
    pub data_port: u16,
    /// Port of live viewers.
    #[arg(long, default_value_t = 5344)]
    pub live_port: u16,
    /// Output directory [default: $HOME/lttng-traces].
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Address to listen on; anything but localhost lets other machines stream traces in and
    /// read them, so it must be asked for.
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    pub listen: IpAddr,
}

pub fn run(args: &RelayArgs) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let output = match &args.output {
        Some(o) => o.clone(),
        None => PathBuf::from(std::env::var_os("HOME").ok_or("HOME is not set: give -o DIR")?)
            .join("lttng-traces"),
    };
    let mut config = relay::Config::new(output);
    config.listen = args.listen;
    config.control_port = args.control_port;
    config.data_port = args.data_port;
    config.live_port = args.live_port;
    relay::run(&config)?;
    Ok(ExitCode::SUCCESS)
}
