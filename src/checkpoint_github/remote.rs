//! Which GitHub repository the issue lives in: `--repo OWNER/NAME` (or `HOST/OWNER/NAME`
//! for GitHub Enterprise, as gh takes it), else the `origin` remote's URL read with git2.

use std::path::{Path, PathBuf};

/// Why no GitHub repository could be named.
#[derive(Debug, thiserror::Error)]
pub enum RepoError {
    #[error("--repo must be OWNER/NAME (or HOST/OWNER/NAME), not {0:?}")]
    BadSlug(String),
    #[error("{} is not in a git repository: pass --repo OWNER/NAME", .0.display())]
    NotARepository(PathBuf),
    #[error("this repository has no `origin` remote: pass --repo OWNER/NAME")]
    NoOrigin,
    #[error(
        "the `origin` remote ({0}) is not a repository on GitHub: pass --repo OWNER/NAME (HOST/OWNER/NAME for GitHub Enterprise)"
    )]
    NotOnGithub(String),
}

/// A repository on GitHub.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GhRepo {
    pub host: String,
    pub owner: String,
    pub name: String,
}

impl GhRepo {
    /// The form gh's `--repo` takes: `owner/name` on github.com, else `host/owner/name`.
    pub fn slug(&self) -> String {
        if self.host == "github.com" {
            format!("{}/{}", self.owner, self.name)
        } else {
            format!("{}/{}/{}", self.host, self.owner, self.name)
        }
    }
}

fn valid_part(part: &str) -> bool {
    !part.is_empty()
        && !part.starts_with('-')
        && !part.starts_with('.')
        && part.len() <= 100
        && part.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Parses `--repo`: `OWNER/NAME` or `HOST/OWNER/NAME`.
pub fn parse_slug(text: &str) -> Result<GhRepo, RepoError> {
    let parts: Vec<&str> = text.trim().split('/').collect();
    let (host, owner, name) = match parts.as_slice() {
        [owner, name] => ("github.com", *owner, *name),
        [host, owner, name] => (*host, *owner, *name),
        _ => return Err(RepoError::BadSlug(text.to_string())),
    };
    let name = name.strip_suffix(".git").unwrap_or(name);
    if ![host, owner, name].iter().all(|p| valid_part(p)) {
        return Err(RepoError::BadSlug(text.to_string()));
    }
    Ok(GhRepo { host: host.to_ascii_lowercase(), owner: owner.to_string(), name: name.to_string() })
}

/// Parses a remote URL on github.com: `git@github.com:owner/name.git`,
/// `https://github.com/owner/name(.git)`, `ssh://git@github.com/owner/name`. `None` for
/// anything else.
pub fn parse_remote_url(url: &str) -> Option<GhRepo> {
    let url = url.trim();
    let path = if let Some(rest) = url.strip_prefix("git@github.com:") {
        rest
    } else {
        let rest = ["https://", "http://", "ssh://", "git://", "git+ssh://"]
            .iter()
            .find_map(|scheme| url.strip_prefix(scheme))?;
        let (authority, path) = rest.split_once('/')?;
        let host = authority.rsplit('@').next()?;
        let host = host.split(':').next()?;
        if !host.eq_ignore_ascii_case("github.com") && !host.eq_ignore_ascii_case("www.github.com") {
            return None;
        }
        path
    };
    let path = path.trim_end_matches('/');
    let path = path.strip_suffix(".git").unwrap_or(path);
    let (owner, name) = path.split_once('/')?;
    (valid_part(owner) && valid_part(name)).then(|| GhRepo {
        host: "github.com".into(),
        owner: owner.to_string(),
        name: name.to_string(),
    })
}

/// The `origin` remote of the repository at `root`, as a GitHub repository.
pub fn from_origin(root: &Path) -> Result<GhRepo, RepoError> {
    let git = git2::Repository::discover(root).map_err(|_| RepoError::NotARepository(root.to_path_buf()))?;
    let remote = git.find_remote("origin").map_err(|_| RepoError::NoOrigin)?;
    let url = remote.url().unwrap_or_default().to_string();
    parse_remote_url(&url).ok_or(RepoError::NotOnGithub(url))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_urls_are_recognised() {
        let acme = Some(GhRepo { host: "github.com".into(), owner: "acme".into(), name: "shop".into() });
        for url in [
            "git@github.com:acme/shop.git",
            "git@github.com:acme/shop",
            "https://github.com/acme/shop",
            "https://github.com/acme/shop.git",
            "https://token@github.com/acme/shop.git/",
            "ssh://git@github.com/acme/shop",
            "ssh://git@github.com:22/acme/shop.git",
        ] {
            assert_eq!(parse_remote_url(url), acme, "{url}");
        }
        for url in [
            "git@gitlab.com:acme/shop.git",
            "https://gitlab.com/acme/shop",
            "https://github.com.evil.example/acme/shop",
            "/srv/git/shop.git",
            "https://github.com/acme",
            "https://github.com/acme/shop/extra",
        ] {
            assert_eq!(parse_remote_url(url), None, "{url}");
        }
    }

    #[test]
    fn repo_flags_are_checked() {
        assert_eq!(parse_slug("acme/shop").unwrap().slug(), "acme/shop");
        assert_eq!(parse_slug("ghe.corp/acme/shop").unwrap().slug(), "ghe.corp/acme/shop");
        for bad in ["acme", "-x/shop", "acme/shop/extra/more", "acme/sh op", ""] {
            assert!(parse_slug(bad).is_err(), "{bad}");
        }
        assert_eq!(
            parse_slug("acme").unwrap_err().to_string(),
            "--repo must be OWNER/NAME (or HOST/OWNER/NAME), not \"acme\""
        );
        let dir = tempfile::tempdir().unwrap();
        let error = from_origin(dir.path()).unwrap_err().to_string();
        assert_eq!(
            error,
            format!("{} is not in a git repository: pass --repo OWNER/NAME", dir.path().display())
        );
    }
}
