//! What every trapline command says and how it ends, below the machine and
//! the lab so that a command without either (`trapline report`) says it
//! the same way: standard output that ends the program quietly on a closed
//! pipe ([`out`](mod@out), with the [`out!`] and [`outln!`] macros), standard error
//! in words ([`words`]), and the process exit statuses ([`status`]).

#[macro_use]
pub mod out;
pub mod status;
pub mod words;
